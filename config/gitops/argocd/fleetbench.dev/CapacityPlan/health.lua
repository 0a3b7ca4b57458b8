-- Argo CD health check for fleetbench.dev/CapacityPlan. argocd-cm-patch.yaml carries this file verbatim;
-- internal/gitops runs it on fixtures and checks the copy (go test ./internal/gitops -update rewrites it).
-- Argo CD runs custom checks without Lua's string and math libraries: plain Lua only.
local hs = {}

-- reason: message, or whichever of them is set.
local function describe(st, fallback)
  local reason, message = st.reason or "", st.message or ""
  if reason ~= "" and message ~= "" then
    return reason .. ": " .. message
  end
  if reason ~= "" then
    return reason
  end
  if message ~= "" then
    return message
  end
  return fallback
end

-- The condition of the given type, or nil.
local function condition(st, type)
  if st.conditions == nil then
    return nil
  end
  for _, c in ipairs(st.conditions) do
    if c.type == type then
      return c
    end
  end
  return nil
end

local st = obj.status
if st == nil or st.phase == nil or st.phase == "" then
  hs.status = "Progressing"
  hs.message = "Waiting for the fleetbench operator to pick up the CapacityPlan"
  return hs
end

-- A guard: the spec is immutable (edits are refused at admission), so the generation does not
-- move in practice; a status for another generation is still not trusted.
local generation = obj.metadata and obj.metadata.generation
if generation ~= nil and st.observedGeneration ~= nil and st.observedGeneration < generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to observe generation " .. tostring(generation) ..
    " (status describes " .. tostring(st.observedGeneration) .. ")"
  return hs
end

local progress = ""
if st.progress ~= nil and st.progress ~= "" then
  progress = st.progress .. " cells; "
end

if st.phase == "Running" then
  hs.status = "Progressing"
  hs.message = progress .. describe(st, "Running")
  return hs
end

if st.phase == "Succeeded" then
  local ready = condition(st, "Ready")
  if ready ~= nil and ready.status == "True" then
    hs.status = "Healthy"
  else
    hs.status = "Degraded"
  end
  hs.message = progress .. describe(st, "Succeeded")
  return hs
end

if st.phase == "Failed" then
  hs.status = "Degraded"
  hs.message = progress .. describe(st, "Failed")
  return hs
end

hs.status = "Unknown"
hs.message = "Unknown phase " .. tostring(st.phase)
return hs

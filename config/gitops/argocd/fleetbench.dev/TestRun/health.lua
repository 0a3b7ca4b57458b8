-- Argo CD health check for fleetbench.dev/TestRun. argocd-cm-patch.yaml carries this file verbatim;
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

local st = obj.status
if st == nil or st.phase == nil or st.phase == "" then
  hs.status = "Progressing"
  hs.message = "Waiting for the fleetbench operator to pick up the TestRun"
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

local phase = st.phase
if phase == "Pending" or phase == "Provisioning" or phase == "Starting" or phase == "Running" or phase == "Collecting" then
  hs.status = "Progressing"
  if phase == "Running" and st.progress ~= nil and st.progress.summary ~= nil and st.progress.summary ~= "" then
    hs.message = "Running: " .. st.progress.summary
  else
    hs.message = phase .. ": " .. describe(st, "in progress")
  end
  return hs
end

if phase == "Failed" then
  hs.status = "Degraded"
  hs.message = describe(st, "Failed")
  return hs
end

if phase == "Succeeded" then
  local verdict = st.verdict or ""
  if verdict == "PASSED" then
    hs.status = "Healthy"
    hs.message = "PASSED: " .. describe(st, "the run passed")
  elseif verdict == "FAILED" or verdict == "INCONCLUSIVE" then
    hs.status = "Degraded"
    hs.message = verdict .. ": " .. describe(st, "see the TestRun's status")
  elseif verdict == "REGRESSED" then
    -- Worse than spec.baseline beyond its band, by more than noise: the rollout stops here.
    hs.status = "Degraded"
    local worst = st.comparison and st.comparison.worst or ""
    if worst ~= "" then
      hs.message = "REGRESSED: " .. worst
    else
      hs.message = "REGRESSED: " .. describe(st, "see status.comparison")
    end
  else
    hs.status = "Progressing"
    hs.message = "Succeeded, waiting for the verdict"
  end
  return hs
end

hs.status = "Unknown"
hs.message = "Unknown phase " .. tostring(phase)
return hs

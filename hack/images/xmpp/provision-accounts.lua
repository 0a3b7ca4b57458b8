-- provision-accounts.lua: writes XMPP_USERS accounts <XMPP_USER_PREFIX><n> (n = 0..USERS-1)
-- with password XMPP_PASSWORD for host XMPP_DOMAIN straight into prosody's internal storage
-- under PROSODY_DATA, the files mod_storage_internal + mod_auth_internal_plain read:
--   <data>/<encode(host)>/accounts/<encode(user)>.dat  containing  return { ["password"] = "...";};
-- encode() is util.datamanager's (every non-alphanumeric byte becomes %xx). No PBKDF2 and no
-- process per account, so 100000 accounts take seconds. Run as the user prosody runs as.
local lfs = require "lfs"

local function env(name, default)
	local v = os.getenv(name)
	if v == nil or v == "" then return default end
	return v
end

local data = env("PROSODY_DATA", "/var/lib/prosody")
local host = env("XMPP_DOMAIN", "fleetbench.local"):lower()
local prefix = env("XMPP_USER_PREFIX", "device")
local password = env("XMPP_PASSWORD", "secret")
local users = tonumber(env("XMPP_USERS", "0"))
if not users or users < 0 or users % 1 ~= 0 then
	io.stderr:write("provision-accounts: XMPP_USERS must be a non-negative integer\n")
	os.exit(1)
end
-- nodeprep lower-cases localparts; an account stored in upper case could never log in.
if prefix ~= prefix:lower() then
	io.stderr:write("provision-accounts: XMPP_USER_PREFIX lower-cased to " .. prefix:lower() .. "\n")
	prefix = prefix:lower()
end

local function encode(s)
	return (s:gsub("%W", function(c) return string.format("%%%02x", c:byte()) end))
end

local function mkdir(path)
	local ok, err = lfs.mkdir(path)
	if not ok and lfs.attributes(path, "mode") ~= "directory" then
		io.stderr:write("provision-accounts: mkdir " .. path .. ": " .. tostring(err) .. "\n")
		os.exit(1)
	end
end

mkdir(data)
mkdir(data .. "/" .. encode(host))
local dir = data .. "/" .. encode(host) .. "/accounts"
mkdir(dir)

local body = string.format("return {\n\t[\"password\"] = %q;\n};\n", password)
local eprefix = encode(prefix)
local start = os.clock()
for n = 0, users - 1 do
	local path = dir .. "/" .. eprefix .. n .. ".dat"
	local f, err = io.open(path, "w")
	if not f then
		io.stderr:write("provision-accounts: " .. tostring(err) .. "\n")
		os.exit(1)
	end
	f:write(body)
	f:close()
end
io.stderr:write(string.format("provision-accounts: %d accounts %s0..%s%d@%s in %s (%.2f s CPU)\n",
	users, prefix, prefix, math.max(users - 1, 0), host, dir, os.clock() - start))

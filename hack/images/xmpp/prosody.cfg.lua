-- Prosody 0.12 configuration of fleetbench/prosody:dev (installed as /etc/prosody/prosody.cfg.lua).
-- Static: everything that varies comes from the environment through prosody's ENV_<NAME>
-- lookups, which prosody-entrypoint.sh exports with defaults, so the root filesystem can stay
-- read-only. The only directory written is data_path (PROSODY_DATA, default /var/lib/prosody).
--
-- TEST SETUP, NOT FOR PRODUCTION: no TLS anywhere (no certificates in the image), passwords
-- stored in plain text (auth internal_plain, so thousands of accounts are written in a blink
-- and a login costs no PBKDF2), and SASL PLAIN offered over unencrypted c2s, WebSocket and BOSH.

data_path = ENV_PROSODY_DATA
-- Foreground (-F), no pidfile: nothing to write outside data_path.
pidfile = nil

-- Everything to stdout (prosody's console sink is plain stdout when it is not a terminal).
log = { { levels = { min = ENV_PROSODY_LOG_LEVEL }, to = "console" } }

-- epoll backend; a deep accept queue (prosody's 128 drops connections under a session storm).
-- The open-files limit is whatever the container gets: prosody does not raise it.
network_backend = "epoll"
network_settings = { tcp_backlog = 4096 }

-- Ports and the listening address come from XMPP_C2S_PORT (5222), XMPP_HTTP_PORT (5280) and
-- XMPP_INTERFACE (* = all; 127.0.0.1 for a local run on the host's network).
interfaces = { ENV_XMPP_INTERFACE }
c2s_ports = { tonumber(ENV_XMPP_C2S_PORT) }
http_ports = { tonumber(ENV_XMPP_HTTP_PORT) }
http_interfaces = { ENV_XMPP_INTERFACE }
https_ports = {}
s2s_ports = {}

modules_enabled = {
	"roster"; "saslauth"; "disco"; "ping"; "time"; "uptime"; "version";
	"http"; "websocket"; "bosh";
	"http_openmetrics";
}
-- No federation; no TLS module (there is no certificate to offer).
modules_disabled = { "s2s"; "s2s_auth_certs"; "tls" }

authentication = "internal_plain"
storage = "internal"

-- Plain-text SASL over plain connections: test setup only.
c2s_require_encryption = false
s2s_require_encryption = false
allow_unencrypted_plain_auth = true
consider_websocket_secure = true
consider_bosh_secure = true

-- OpenMetrics at http://host:5280/metrics, open to any address (the target lives in its own
-- namespace behind a NetworkPolicy).
statistics = "internal"
statistics_interval = "manual"
openmetrics_allow_cidr = "0.0.0.0/0"

VirtualHost (ENV_XMPP_DOMAIN)

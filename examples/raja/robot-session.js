// Seed 003's robot, one XMPP session per iteration over WebSocket (RFC 7395, k6/websockets):
// open the framing, authenticate with SASL PLAIN as <prefix><id>, restart the stream, bind a
// resource, send initial presence, keep the session alive with XEP-0199 pings for HOLD_SECONDS,
// then close the framing and the socket. Every stanza carries xmlns="jabber:client" (prosody
// rejects a bind without it).
//
// Environment:
//   TARGET_XMPP_URL   ws://host:port of the broker (the operator sets it for a component named xmpp)
//   XMPP_DOMAIN       fleetbench.local        XMPP_USER_PREFIX  device
//   XMPP_PASSWORD     secret                  DEVICE_ID_FIRST   0 (first account of this runner)
//   DEVICE_COUNT      accounts this runner may use (ids wrap around inside the range)
//   HOLD_SECONDS      10   PING_SECONDS 5      SETUP_TIMEOUT_SECONDS 30
//   VUS               standalone run only: that many VUs, one session each (per-vu-iterations).
//                     Without it the script exports no scenario, so the TestRun's device model
//                     (spec.load) drives it.
//
//   VUS=200 TARGET_XMPP_URL=ws://127.0.0.1:15280 bin/fleetbench-runner run examples/raja/robot-session.js
import { WebSocket } from 'k6/websockets';
import { check } from 'k6';
import { setTimeout, setInterval, clearInterval, clearTimeout } from 'k6/timers';
import encoding from 'k6/encoding';
import exec from 'k6/execution';
import { Counter, Trend } from 'k6/metrics';

const url = `${__ENV.TARGET_XMPP_URL || 'ws://127.0.0.1:5280'}/xmpp-websocket`;
const domain = __ENV.XMPP_DOMAIN || 'fleetbench.local';
const prefix = __ENV.XMPP_USER_PREFIX || 'device';
const password = __ENV.XMPP_PASSWORD || 'secret';
const first = parseInt(__ENV.DEVICE_ID_FIRST || '0', 10);
const count = parseInt(__ENV.DEVICE_COUNT || '0', 10);
const holdMs = parseFloat(__ENV.HOLD_SECONDS || '10') * 1000;
const pingMs = parseFloat(__ENV.PING_SECONDS || '5') * 1000;
const setupTimeoutMs = parseFloat(__ENV.SETUP_TIMEOUT_SECONDS || '30') * 1000;

const vus = parseInt(__ENV.VUS || '0', 10);
export const options = vus > 0
  ? {
    scenarios: {
      robots: { executor: 'per-vu-iterations', vus, iterations: 1, maxDuration: `${Math.ceil((setupTimeoutMs + holdMs) / 1000) + 30}s` },
    },
  }
  : {};

const sessionSetup = new Trend('xmpp_session_setup', true); // ws open -> bound
const pingRTT = new Trend('xmpp_ping_rtt', true);
const xmppErrors = new Counter('xmpp_errors');

const FRAMING = 'urn:ietf:params:xml:ns:xmpp-framing';
const open = `<open xmlns="${FRAMING}" to="${domain}" version="1.0"/>`;

export default function () {
  const n = exec.scenario.iterationInInstance;
  const id = first + (count > 0 ? n % count : n);
  const user = `${prefix}${id}`;
  const auth = encoding.b64encode(`\u0000${user}\u0000${password}`);

  let state = 'opening'; // opening -> auth -> restart -> bind -> online -> closing
  let t0 = 0;
  let pings = 0;
  let pingSent = 0;
  let pingTimer = null;
  let result = { opened: false, authenticated: false, bound: false, pinged: false, closed: false };

  const ws = new WebSocket(url, 'xmpp');
  const guard = setTimeout(() => {
    if (state !== 'online' && state !== 'closing') {
      xmppErrors.add(1, { stage: `timeout_${state}` });
      ws.close();
    }
  }, setupTimeoutMs);

  const finish = () => {
    if (pingTimer !== null) clearInterval(pingTimer);
    state = 'closing';
    ws.send(`<close xmlns="${FRAMING}"/>`);
  };

  ws.onopen = () => {
    result.opened = true;
    t0 = Date.now();
    ws.send(open);
  };

  ws.onmessage = (e) => {
    const d = String(e.data);
    if (d.startsWith('<open')) return; // the server's framing open; features follow
    if (d.startsWith('<close')) { // the server closes the framing (our close echoed, or an error)
      if (state === 'closing') result.closed = true;
      ws.close();
      return;
    }
    switch (state) {
      case 'opening':
        if (d.includes('<mechanism>PLAIN</mechanism>')) {
          state = 'auth';
          ws.send(`<auth xmlns="urn:ietf:params:xml:ns:xmpp-sasl" mechanism="PLAIN">${auth}</auth>`);
        } else if (d.includes('features')) {
          xmppErrors.add(1, { stage: 'no_plain' });
          ws.close();
        }
        return;
      case 'auth':
        if (d.startsWith('<success')) {
          result.authenticated = true;
          state = 'restart';
          ws.send(open); // stream restart after SASL
        } else {
          xmppErrors.add(1, { stage: 'auth' });
          ws.close();
        }
        return;
      case 'restart':
        if (d.includes('urn:ietf:params:xml:ns:xmpp-bind')) {
          state = 'bind';
          ws.send(`<iq xmlns="jabber:client" type="set" id="bind1"><bind xmlns="urn:ietf:params:xml:ns:xmpp-bind"><resource>k6-${exec.vu.idInInstance}-${exec.vu.iterationInInstance}</resource></bind></iq>`);
        }
        return;
      case 'bind':
        if (d.includes('id="bind1"') || d.includes("id='bind1'")) {
          if (d.includes('type="result"') || d.includes("type='result'")) {
            result.bound = true;
            sessionSetup.add(Date.now() - t0);
            state = 'online';
            clearTimeout(guard);
            ws.send('<presence xmlns="jabber:client"/>');
            pingTimer = setInterval(() => {
              pings++;
              pingSent = Date.now();
              ws.send(`<iq xmlns="jabber:client" type="get" id="ping${pings}" to="${domain}"><ping xmlns="urn:xmpp:ping"/></iq>`);
            }, pingMs);
            setTimeout(finish, holdMs);
          } else {
            xmppErrors.add(1, { stage: 'bind' });
            ws.close();
          }
        }
        return;
      case 'online':
        if (d.startsWith('<iq') && (d.includes(`id="ping${pings}"`) || d.includes(`id='ping${pings}'`))) {
          if (d.includes('type="result"') || d.includes("type='result'")) {
            result.pinged = true;
            pingRTT.add(Date.now() - pingSent);
          } else {
            xmppErrors.add(1, { stage: 'ping' });
          }
        } else if (d.startsWith('<stream:error') || d.includes('<stream:error')) {
          xmppErrors.add(1, { stage: 'stream_error' });
        }
        return;
      default:
    }
  };

  ws.onerror = (e) => {
    // Both ends closing the socket at once after the framing <close/> exchange ("websocket:
    // close sent") is a race in the close handshake, not a failure.
    if (state === 'closing' && result.closed) return;
    xmppErrors.add(1, { stage: `ws_${state}` });
    console.warn(`${user}: websocket error in ${state}: ${e.error}`);
  };

  ws.onclose = () => {
    clearTimeout(guard);
    if (pingTimer !== null) clearInterval(pingTimer);
    check(result, {
      'ws opened': (r) => r.opened,
      'authenticated': (r) => r.authenticated,
      'bound': (r) => r.bound,
      'ping answered': (r) => r.pinged,
      'closed cleanly': (r) => r.closed,
    });
  };
}

// Source: k6 documentation, "Tags and Groups": groups (https://grafana.com/docs/k6/latest/using-k6/tags-and-groups/#groups).
// Covers: groups (nested), checks inside groups, group_duration thresholds and {group:::name} thresholds on requests and checks.
// fidelity: cluster
import http from 'k6/http';
import { check, group } from 'k6';
import exec from 'k6/execution';

export const options = {
  vus: 3,
  iterations: 150,
  thresholds: {
    'group_duration{group:::browse}': ['avg<5000', 'max<30000'],
    'group_duration{group:::checkout::payment}': ['p(95)<5000', 'min<0.001'],
    'http_req_duration{group:::checkout}': ['p(90)<5000'],
    'http_reqs{group:::browse}': ['count==300'],
    'checks{group:::checkout::payment}': ['rate>0.99'], // a third of the payments are refused
    'group_duration{group:::wishlist}': ['avg<1'], // a group that never runs: k6 judges it on 0
  },
};

export default function () {
  const headers = { 'Content-Type': 'application/json' };
  group('browse', () => {
    const home = http.get(`${__ENV.TARGET}/ok`);
    check(home, { 'home is up': (r) => r.status === 200 });
    const list = http.get(`${__ENV.TARGET}/items`);
    check(list, { 'items listed': (r) => r.json().length === 25 });
  });
  group('checkout', () => {
    const cart = http.post(`${__ENV.TARGET}/echo`, JSON.stringify({ item: exec.vu.iterationInScenario % 25 }), { headers });
    check(cart, { 'cart saved': (r) => r.status === 200 });
    group('payment', () => {
      const refused = exec.scenario.iterationInTest % 3 === 0;
      const pay = http.get(`${__ENV.TARGET}${refused ? '/status/402' : '/ok'}`);
      check(pay, { paid: (r) => r.status === 200 });
    });
  });
}

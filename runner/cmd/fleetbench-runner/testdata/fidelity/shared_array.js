// Source: k6 documentation, k6/data "SharedArray" and "open()" (https://grafana.com/docs/k6/latest/javascript-api/k6-data/sharedarray/, https://grafana.com/docs/k6/latest/javascript-api/init-context/open/).
// Covers: open() of a JSON data file beside the script, in a SharedArray; each iteration takes the user of its number.
// fidelity: cluster
// fidelity: file shared_array_users.json
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';
import { SharedArray } from 'k6/data';

const users = new SharedArray('users', function () {
  return JSON.parse(open('./shared_array_users.json'));
});

export const options = {
  scenarios: {
    login: { executor: 'shared-iterations', vus: 3, iterations: 30, maxDuration: '30s' },
  },
  thresholds: {
    'http_reqs{user_kind:admin}': ['count==10'],
    checks: ['rate==1'],
  },
};

export default function () {
  const user = users[exec.scenario.iterationInTest % users.length];
  const res = http.post(`${__ENV.TARGET}/echo`, JSON.stringify({ username: user.username }), {
    headers: { 'Content-Type': 'application/json' },
    tags: { user_kind: user.admin ? 'admin' : 'member' },
  });
  check(res, { 'echoed the user': (r) => JSON.parse(r.json('body')).username === user.username });
}

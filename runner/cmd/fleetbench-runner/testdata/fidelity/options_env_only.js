// Source: k6 documentation, "How to use options": options set as K6_* environment variables (https://grafana.com/docs/k6/latest/using-k6/k6-options/how-to/#environment-variables).
// Covers: empty options, the whole load given as the runners' K6_* environment (spec.runner.env): 3 VUs sharing 12 iterations.
// fidelity: cluster
// fidelity: env K6_VUS=3 K6_ITERATIONS=12
import http from 'k6/http';
import { check } from 'k6';

export const options = {};

export default function () {
  const res = http.get(`${__ENV.TARGET}/ok`);
  check(res, { 'status is 200': (r) => r.status === 200 });
}

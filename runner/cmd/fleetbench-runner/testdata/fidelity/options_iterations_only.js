// Source: k6 documentation, k6 options reference, "Iterations" (https://grafana.com/docs/k6/latest/using-k6/k6-options/reference/#iterations).
// Covers: options with iterations and no vus: k6 run defaults to 1 VU (issue 24: the old pre-flight refused it).
// fidelity: cluster
import http from 'k6/http';

export const options = { iterations: 5 };

export default function () {
  http.get(`${__ENV.TARGET}/ok`);
}

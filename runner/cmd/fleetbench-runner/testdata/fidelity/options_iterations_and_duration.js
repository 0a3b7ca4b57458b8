// Source: k6 documentation, k6 options reference, "Iterations" with "Duration" as its maximum (https://grafana.com/docs/k6/latest/using-k6/k6-options/reference/#iterations).
// Covers: iterations and duration together without vus: a shared-iterations run of 1 VU that ends at 10 iterations, long before 30 s.
// fidelity: cluster
import http from 'k6/http';

export const options = { iterations: 10, duration: '30s' };

export default function () {
  http.get(`${__ENV.TARGET}/ok`);
}

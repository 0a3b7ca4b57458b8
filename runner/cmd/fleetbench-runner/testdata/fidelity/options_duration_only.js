// Source: k6 documentation, k6 options reference, "Duration" (https://grafana.com/docs/k6/latest/using-k6/k6-options/reference/#duration).
// Covers: options with a duration and no vus: 1 VU for 3 s, an iteration every 1.2 s, so three start (0, 1.2, 2.4 s), far from the end.
// fidelity: cluster
import http from 'k6/http';
import { sleep } from 'k6';

export const options = { duration: '3s' };

export default function () {
  http.get(`${__ENV.TARGET}/ok`);
  sleep(1.2);
}

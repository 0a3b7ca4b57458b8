// Source: k6 documentation, "How to use options": options set on the command line (https://grafana.com/docs/k6/latest/using-k6/k6-options/how-to/).
// Covers: empty options, the whole load given as k6 run flags in spec.args.
// fidelity: cluster
// fidelity: args --vus 3 --iterations 30
import http from 'k6/http';

export const options = {};

export default function () {
  http.get(`${__ENV.TARGET}/ok`);
}

// Source: k6 documentation, "Scenarios" and the options reference, "VUs" (https://grafana.com/docs/k6/latest/using-k6/scenarios/, https://grafana.com/docs/k6/latest/using-k6/k6-options/reference/#vus).
// Covers: the top-level vus shortcut next to scenarios. k6 v2.2.0 warns "`vus=4` overrides scenarios configuration" and
// runs a default scenario of 4 iterations shared among 4 VUs instead of the scenario below; the fleet must do the same.
// (duration, iterations or stages next to scenarios are refused by k6, and by the pre-flight: TestPreflightRefusesWhatK6Refuses.)
// fidelity: cluster
import http from 'k6/http';

export const options = {
  vus: 4,
  scenarios: {
    browse: { executor: 'per-vu-iterations', vus: 2, iterations: 10 },
  },
  thresholds: {
    'iterations{scenario:default}': ['count==4'],
    'iterations{scenario:browse}': ['count==20'], // never runs: fails on 0
  },
};

export default function () {
  http.get(`${__ENV.TARGET}/ok`);
}

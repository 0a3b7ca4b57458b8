// Source: k6 documentation, "Environment variables" (https://grafana.com/docs/k6/latest/using-k6/environment-variables/); k6-operator passes them as runner.env.
// Covers: __ENV read in init code, from the runners' environment: the options, the path and a tag come from it.
// fidelity: cluster
// fidelity: env LOAD_VUS=3 LOAD_ITERATIONS=24 API_PATH=/items STAGE_NAME=qa
import http from 'k6/http';
import { check } from 'k6';

const VUS = parseInt(__ENV.LOAD_VUS, 10);
const ITERATIONS = parseInt(__ENV.LOAD_ITERATIONS, 10);
const URL = `${__ENV.TARGET}${__ENV.API_PATH}`;

export const options = {
  scenarios: {
    api: { executor: 'shared-iterations', vus: VUS, iterations: ITERATIONS, maxDuration: '30s', tags: { stage: __ENV.STAGE_NAME } },
  },
  thresholds: {
    'http_reqs{stage:qa}': [`count==${ITERATIONS}`],
    checks: ['rate==1'],
  },
};

export default function () {
  const res = http.get(URL);
  check(res, { 'items listed': (r) => r.json().length === 25 });
}

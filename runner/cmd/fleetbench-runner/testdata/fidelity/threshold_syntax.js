// Source: k6 documentation, "Thresholds": threshold syntax (https://grafana.com/docs/k6/latest/using-k6/thresholds/#threshold-syntax).
// Covers: threshold syntax variants: spaces around operators, quoted tag values, p(99.9), === and !=, several expressions on one metric.
import http from 'k6/http';
import exec from 'k6/execution';
import { Trend } from 'k6/metrics';

const score = new Trend('score'); // from the iteration number

export const options = {
  vus: 6,
  iterations: 400,
  thresholds: {
    score: ['p(99.9) < 1000', 'p(50)>=100', 'avg != 0', 'min === 0', 'max<=999', 'med < 150', 'p(10) > 50'],
    'http_req_duration{name:"home"}': ['p(95)<5000'],
    "http_reqs{ name: 'home' }": ['count == 400', 'count != 0'],
  },
};

export default function () {
  http.get(`${__ENV.TARGET}/ok`, { tags: { name: 'home' } });
  score.add((exec.scenario.iterationInTest * 7919) % 1000);
}

// Source: k6 documentation, k6/http "setResponseCallback" with expectedStatuses (https://grafana.com/docs/k6/latest/javascript-api/k6-http/set-response-callback/).
// Covers: http_req_failed with some 503s, a response callback that expects 404s, and {expected_response:...} thresholds.
import http from 'k6/http';
import exec from 'k6/execution';

http.setResponseCallback(http.expectedStatuses(200, 404));

export const options = {
  scenarios: {
    api: { executor: 'shared-iterations', vus: 3, iterations: 300, maxDuration: '30s' },
  },
  thresholds: {
    http_req_failed: ['rate<0.2', 'rate<0.05'], // 10 % fail: the second fails
    'http_req_duration{expected_response:true}': ['p(95)<5000'],
    'http_req_duration{expected_response:false}': ['max<5000'],
    'http_reqs{expected_response:false}': ['count==60'],
    'http_req_failed{name:lookup}': ['rate==0'],
    'http_req_failed{name:strict}': ['rate>0.99'],
  },
};

export default function () {
  const i = exec.scenario.iterationInTest;
  http.get(`${__ENV.TARGET}/status/404`, { tags: { name: 'lookup' } });
  http.get(`${__ENV.TARGET}${i % 5 === 0 ? '/fail' : '/ok'}`);
  if (i % 10 === 0) {
    // Only 200 is expected for this one request, whatever the global callback says.
    http.get(`${__ENV.TARGET}/status/404`, { tags: { name: 'strict' }, responseCallback: http.expectedStatuses(200) });
  }
}

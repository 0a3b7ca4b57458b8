// Source: k6 documentation, "HTTP Requests": URL grouping with name tags and http.url (https://grafana.com/docs/k6/latest/using-k6/http-requests/#url-grouping).
// Covers: request tags (name, a custom tag via params.tags, an http.url template) and thresholds tagged by name, status and the custom tag.
import http from 'k6/http';
import exec from 'k6/execution';

export const options = {
  scenarios: {
    shop: { executor: 'per-vu-iterations', vus: 3, iterations: 50, maxDuration: '30s' },
  },
  thresholds: {
    'http_req_duration{name:home}': ['p(95)<5000', 'avg<0.001'], // the second fails
    'http_reqs{status:200}': ['count==420'],
    'http_reqs{status:404}': ['count<100'], // 150 lookups miss: fails
    'http_req_duration{status:503}': ['max<5000'],
    'http_reqs{flow:search}': ['count>=100'],
    'http_req_duration{flow:search,name:search}': ['p(99)<5000'],
    'http_reqs{flow:checkout}': ['count<1'], // no request has this tag value
  },
};

export default function () {
  const i = exec.scenario.iterationInTest;
  http.get(`${__ENV.TARGET}/ok`, { tags: { name: 'home' } });
  const q = ['shoes', 'hats', 'socks'][i % 3];
  http.get(`${__ENV.TARGET}/echo?q=${q}`, { tags: { name: 'search', flow: 'search' } });
  const product = i % 5;
  const status = product === 4 ? 503 : 200;
  http.get(http.url`${__ENV.TARGET}/status/${status}?product=${product}`);
  http.get(`${__ENV.TARGET}/status/404`, { tags: { name: 'missing', flow: 'search' } });
}

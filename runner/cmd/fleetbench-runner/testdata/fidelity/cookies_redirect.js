// Source: k6 documentation, "HTTP Cookies" and k6/http "Params" (redirects) (https://grafana.com/docs/k6/latest/using-k6/cookies/, https://grafana.com/docs/k6/latest/javascript-api/k6-http/params/).
// Covers: cookies set by the server through a redirect and sent back by the VU's jar, a cookie set in the jar, request cookies, and redirect chains followed or not (redirects).
// fidelity: cluster
import http from 'k6/http';
import { check } from 'k6';

export const options = {
  scenarios: {
    shop: { executor: 'per-vu-iterations', vus: 2, iterations: 10, maxDuration: '30s' },
  },
  thresholds: {
    'http_reqs{name:redirect}': ['count==60'], // 3 hops and the end, per followed chain; 1 unfollowed
    checks: ['rate==1'],
    'http_req_duration{status:302}': ['max<5000'],
  },
};

export default function () {
  const res = http.get(`${__ENV.TARGET}/cookies/set?session=abc&theme=dark`);
  check(res, {
    'redirected to the cookie list': (r) => r.url.endsWith('/cookies'),
    'server cookie kept': (r) => r.json('cookies.session') === 'abc',
  });
  const jar = http.cookieJar();
  jar.set(`${__ENV.TARGET}/`, 'lang', 'en');
  const again = http.get(`${__ENV.TARGET}/cookies`, { cookies: { visit: 'second' } });
  check(again, {
    'jar cookie sent': (r) => r.json('cookies.lang') === 'en',
    'request cookie sent': (r) => r.json('cookies.visit') === 'second',
  });
  const followed = http.get(`${__ENV.TARGET}/redirect/2`, { tags: { name: 'redirect' } });
  check(followed, { 'followed to the end': (r) => r.status === 200 && r.body === 'ok' });
  const stopped = http.get(`${__ENV.TARGET}/redirect/2`, { redirects: 0, tags: { name: 'redirect' } });
  check(stopped, { 'not followed': (r) => r.status === 302 });
  jar.clear(`${__ENV.TARGET}/`);
}

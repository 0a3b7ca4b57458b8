// Source: k6 documentation, "Create custom metrics" (https://grafana.com/docs/k6/latest/using-k6/metrics/create-custom-metrics/).
// Covers: custom Trend, Counter, Rate and Gauge with thresholds on each, incl. a never-incremented Counter, never-sampled metrics, an empty sub-metric and failing ones.
import http from 'k6/http';
import exec from 'k6/execution';
import { Counter, Gauge, Rate, Trend } from 'k6/metrics';

const cartValue = new Trend('cart_value'); // from the iteration number
const serverTime = new Trend('server_time', true);
const itemsAdded = new Counter('items_added');
const paymentErrors = new Counter('payment_errors'); // never incremented
const discounted = new Rate('discounted_orders');
const fraudFlagged = new Rate('fraud_flagged'); // never sampled
const catalogSize = new Gauge('catalog_size');
const queueDepth = new Gauge('queue_depth'); // never set
const refunds = new Trend('refund_value'); // never sampled

export const options = {
  scenarios: {
    orders: { executor: 'shared-iterations', vus: 3, iterations: 360, maxDuration: '30s' },
  },
  thresholds: {
    cart_value: ['p(95)<185', 'med>90', 'avg<90', 'max<=200', 'min>=10'], // avg is ~99: fails
    'cart_value{currency:EUR}': ['p(90)<200'],
    'cart_value{currency:GBP}': ['p(95)<100', 'max>0'], // no samples: judged on 0, the second fails
    server_time: ['p(99)<5000'],
    items_added: ['count>500', 'count==720', 'rate>0'],
    payment_errors: ['count<1'],
    discounted_orders: ['rate<0.3', 'rate>0.3'], // 25 %: the second fails
    fraud_flagged: ['rate<0.01'], // no samples: no rate, passes
    catalog_size: ['value>=20', 'value>100'], // the second fails
    queue_depth: ['value<1'], // never set: judged on 0
    refund_value: ['p(95)<50', 'avg>0'], // no samples: judged on 0, the second fails
  },
};

export default function () {
  const i = exec.scenario.iterationInTest;
  const res = http.get(`${__ENV.TARGET}/items`);
  catalogSize.add(res.json().length);
  serverTime.add(res.timings.waiting);
  cartValue.add(10 + (i % 120) * 1.5, { currency: i % 2 === 0 ? 'EUR' : 'USD' });
  itemsAdded.add(1 + (i % 3));
  discounted.add(i % 4 === 0);
}

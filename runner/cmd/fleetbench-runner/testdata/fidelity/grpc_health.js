// Source: k6 documentation, k6/net/grpc "Client.healthCheck()" (https://grafana.com/docs/k6/latest/javascript-api/k6-net-grpc/client/client-health-check/).
// Covers: gRPC unary calls with k6/net/grpc (server reflection, the standard health service), checks on the answers and grpc_req_duration thresholds.
import grpc from 'k6/net/grpc';
import { check } from 'k6';
import exec from 'k6/execution';
import { Counter } from 'k6/metrics';

const client = new grpc.Client();
const probes = new Counter('health_probes');
const services = ['', 'fleetbench.Store', 'fleetbench.Legacy', 'fleetbench.Unknown'];

export const options = {
  scenarios: {
    probes: { executor: 'shared-iterations', vus: 3, iterations: 150, maxDuration: '30s' },
  },
  thresholds: {
    grpc_req_duration: ['p(95)<5000', 'avg<0.001'], // the second fails
    'grpc_req_duration{status:0}': ['max<30000'],
    'grpc_req_duration{method:Check}': ['p(90)<5000'],
    checks: ['rate>0.6'],
    'checks{check:serving}': ['rate>0.95'], // Legacy is not serving, Unknown is not found: fails
    health_probes: ['count==150'],
  },
};

export default function () {
  if (exec.vu.iterationInInstance === 0) {
    client.connect(__ENV.GRPC_ADDR, { plaintext: true, reflect: true });
  }
  const service = services[exec.scenario.iterationInTest % services.length];
  const res = client.invoke('grpc.health.v1.Health/Check', { service });
  probes.add(1);
  check(res, {
    'status is OK': (r) => r && r.status === grpc.StatusOK,
    serving: (r) => r && r.message && r.message.status === 'SERVING',
  });
}

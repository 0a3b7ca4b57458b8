// Source: k6 documentation, "How to use options": options from a --config file (https://grafana.com/docs/k6/latest/using-k6/k6-options/how-to/#config-file).
// Covers: a script with no options, its load and thresholds in a JSON config file given with --config (one threshold fails).
// fidelity: cluster
// fidelity: config options_config_file.json
import http from 'k6/http';

export default function () {
  http.get(`${__ENV.TARGET}/ok`);
}

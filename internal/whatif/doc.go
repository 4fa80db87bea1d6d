// Package whatif runs issue 46's APF what-if: the recorded traffic of a
// window (internal/ledger's traffic buckets), classified by the console's
// classifier (internal/apf) under the configuration in force and under a
// draft, replayed through each API server instance's priority levels
// (internal/apfsim), side by side. The same run with no draft is the
// backtest: what the model predicts for the configuration that was live,
// against the 429s the API server really answered.
package whatif

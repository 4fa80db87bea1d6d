// Package apfflood is the real-cluster experiment harness of the APF what-if
// (issue 46), for integration tests only: it puts one user on a priority
// level of its own (Setup), moves it or changes the level for real and waits
// until every API server instance has the change (Move, UpdateLevel), sends
// that user's requests to one instance open-loop at a fixed rate (Flood),
// requests with a known service time that costs the API server no CPU
// (SlowCreates), and reads the instance's own APF counters (Metrics), so a
// test can compare what the console recorded, and what the simulator
// predicts, with what the API server did.
package apfflood

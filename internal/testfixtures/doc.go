// Package testfixtures builds the objects many packages' tests need: real
// PKCS#10 certificate requests, FlowSchemas and their rules, and the default
// APF objects of a real API server. One implementation here instead of a copy
// per test file. It is for tests only: the console binary does not link it
// (internal/importrules checks).
package testfixtures

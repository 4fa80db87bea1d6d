package handlers

import "github.com/clusterdesk/clusterdesk/handlers/csrs"

// csrReplacedText is what a person is told of a request replaced under its
// name before their decision arrived (handlers/csrs), which the tests of the
// single, bulk and group decisions look for.
const csrReplacedText = csrs.ReplacedText

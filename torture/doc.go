// Package torture holds Memento's torture tests: runs that anyone can
// repeat on a laptop, bounded in time and on loopback only, that try to
// make the server lose, duplicate or hang on what it acknowledged.
//
// Three tests, each a Run function returning a JSON-ready report:
//
//   - RunCrash starts `memento serve` as a child process on a new store,
//     drives concurrent message appends and chats at it, kills it with
//     SIGKILL at a random moment, starts it again on the same file and
//     checks that every acknowledged write is there once, that no memory
//     was formed twice, and how long the rescued jobs take to end.
//   - RunFaults starts a FaultServer (an OpenAI-compatible model server
//     that answers 5xx, hangs, malformed JSON, answers missing a required
//     field or slow answers at configured rates), points a child server at
//     it, drives chats and appends, and counts status codes: a model fault
//     must never be a 500, and the child must not die.
//   - RunLoad drives C clients for a while with a mix of chats, appends,
//     context reads and catalog searches (or C simultaneous chats on one
//     thread) and reports throughput, latency quantiles, errors by status
//     and the server's resident memory.
//
// Data flows one way: a Launcher starts servers (Exec runs the memento
// binary as a child; tests may pass their own), clients speak to them only
// through the public HTTP API (Client), and what the clients were told is
// compared with what the server reads back afterwards. Nothing here reaches
// into the store, so the tests judge the server exactly as a user would.
package torture

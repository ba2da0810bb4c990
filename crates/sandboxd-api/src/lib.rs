//! Types of the sandboxd HTTP API, shared by the server, the client and the tests.

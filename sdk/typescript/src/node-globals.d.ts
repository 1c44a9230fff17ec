// The generated fetch client names the DOM's BodyInit; Node's own types (this repository compiles
// without the DOM lib) have RequestInit only. A project compiled with the DOM lib leaves this file out.
type BodyInit = NonNullable<RequestInit['body']>;

//! Single sign-on with an OpenID Connect provider (`web.auth.mode: oidc`): the provider,
//! what it says about a person, server-side sessions, and the two routes of the code flow.

mod claims;
mod provider;
pub mod routes;
pub mod session;

pub use provider::Provider;
pub use session::Person;

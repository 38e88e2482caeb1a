//! Who a request comes from, for the shares one client may hold (long-poll waits, sign-in
//! attempts): a user a trusted proxy named (every user comes through the proxy's address),
//! else the peer address.

use super::auth::Identity;
use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::Extensions;
use axum::http::request::Parts;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};

/// The client a request counts against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Client(pub String);

impl<S: Send + Sync> FromRequestParts<S> for Client {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let client = match parts.extensions.get::<Identity>() {
            Some(Identity::ProxyUser(user) | Identity::Person(user)) => {
                format!("user {}", user.name)
            }
            _ => peer(&parts.extensions).map_or_else(|| "in-process".into(), |ip| ip.to_string()),
        };
        Ok(Client(client))
    }
}

/// The address the connection came from (absent for requests made in process, in tests).
pub fn peer(extensions: &Extensions) -> Option<IpAddr> {
    extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|info| info.0.ip())
}

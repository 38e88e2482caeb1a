//! A real OpenID provider for the sign-in tests: zitadel/oidc's certified example server, built
//! by the test bed from the Go module proxy, with a login form and the users given here. Its
//! issuer is `http://localhost:<port>/`; its client `web` (secret `secret`) may send people
//! back only to the redirect URI given at start.

use super::testbed::Testbed;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const CLIENT_ID: &str = "web";
pub const CLIENT_SECRET: &str = "secret";

/// The running provider; stopped when dropped.
pub struct OidcProvider {
    pub issuer: String,
    child: Child,
    users: PathBuf,
}

/// A person the provider knows: user name and password.
pub struct User<'a> {
    pub name: &'a str,
    pub password: &'a str,
}

impl OidcProvider {
    /// Starts the provider for `users`, sending people back only to `redirect_uri`.
    pub async fn start(users: &[User<'_>], redirect_uri: &str) -> OidcProvider {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let users_json: serde_json::Map<String, serde_json::Value> = users
            .iter()
            .enumerate()
            .map(|(i, user)| {
                let id = format!("id{i}");
                let record = serde_json::json!({
                    "ID": id, "Username": user.name, "Password": user.password,
                    "FirstName": user.name, "LastName": "Test",
                    "Email": format!("{}@example.test", user.name), "EmailVerified": true,
                    "PreferredLanguage": "en",
                });
                (id, record)
            })
            .collect();
        let users =
            std::env::temp_dir().join(format!("fg-oidc-users-{}-{port}.json", std::process::id()));
        std::fs::write(&users, serde_json::to_vec(&users_json).unwrap()).unwrap();
        let child = Command::new(Testbed::bin_dir().join("oidc-provider"))
            .env("PORT", port.to_string())
            .env("USERS_FILE", &users)
            .env("REDIRECT_URI", redirect_uri)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the OpenID provider (tests/testbed/testbed build)");
        let provider = OidcProvider {
            issuer: format!("http://localhost:{port}/"),
            child,
            users,
        };
        let discovery = format!("{}.well-known/openid-configuration", provider.issuer);
        let deadline = Instant::now() + Duration::from_secs(30);
        while !reqwest::get(&discovery)
            .await
            .is_ok_and(|r| r.status().is_success())
        {
            assert!(
                Instant::now() < deadline,
                "the OpenID provider did not start"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        provider
    }
}

impl Drop for OidcProvider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.users);
    }
}

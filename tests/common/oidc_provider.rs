//! A real OpenID provider for the sign-in tests: zitadel/oidc's certified example server, built
//! by the test bed from the Go module proxy, with a login form and the users given here. Its
//! issuer is `http://localhost:<port>/`; its client `web` (secret `secret`) may send people
//! back only to the redirect URI given at start.

use super::testbed::Testbed;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const CLIENT_ID: &str = "web";
pub const CLIENT_SECRET: &str = "secret";

/// The running provider; stopped when dropped.
pub struct OidcProvider {
    pub issuer: String,
    child: Child,
    users: PathBuf,
    port: u16,
    redirect_uri: String,
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
        let child = spawn(port, &users, redirect_uri);
        let provider = OidcProvider {
            issuer: format!("http://localhost:{port}/"),
            child,
            users,
            port,
            redirect_uri: redirect_uri.to_string(),
        };
        provider.answering().await;
        provider
    }

    /// Stops the provider and starts it again at the same address: it makes a new signing key
    /// (and key id) at every start, so this is a key rotation.
    pub async fn restart(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.child = spawn(self.port, &self.users, &self.redirect_uri);
        self.answering().await;
    }

    async fn answering(&self) {
        let discovery = format!("{}.well-known/openid-configuration", self.issuer);
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
    }
}

fn spawn(port: u16, users: &Path, redirect_uri: &str) -> Child {
    Command::new(Testbed::bin_dir().join("oidc-provider"))
        .env("PORT", port.to_string())
        .env("USERS_FILE", users)
        .env("REDIRECT_URI", redirect_uri)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the OpenID provider (tests/testbed/testbed build)")
}

impl Drop for OidcProvider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.users);
    }
}

//! Single sign-on against a real OpenID provider (zitadel/oidc's certified example server,
//! built by the test bed), driven over HTTP as a browser would: the code flow signs a person
//! in with a server-side session; the usual attacks on the flow are refused and recorded
//! (a replayed or foreign return, a response meant for another provider, a redirect off the
//! site); signing out and revoking end the session, and a copy of its cookie with it.

use crate::common;

use common::oidc_provider::{CLIENT_SECRET, OidcProvider, User};
use common::web::demo_config;
use fleetglass::store::{Store, web_sessions};
use fleetglass::web::{self, AppState, Site};
use reqwest::header::{COOKIE, LOCATION, SET_COOKIE};
use reqwest::{Response, StatusCode, redirect::Policy};
use std::net::SocketAddr;

pub(crate) const ALICE: User = User {
    name: "alice",
    password: "alice-secret-pw",
};

struct Sso {
    base: String,
    store: Store,
    database_url: String,
    http: reqwest::Client,
    provider: OidcProvider,
}

/// fleetglass in oidc mode (with a bearer token `ci` for scripts) on a free port, and the
/// provider that may send people back to it; `issuer` overrides the provider's address.
async fn start(issuer: Option<&str>) -> Sso {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let provider = OidcProvider::start(&[ALICE], &format!("{base}/auth/callback")).await;
    let database_url = common::fresh_database_url().await;
    let store = Store::connect(&database_url).await.unwrap();
    store.migrate().await.unwrap();
    let mut config = demo_config();
    config.public_url = Some(base.clone());
    config.web = fleetglass::yaml::from_str(&format!(
        "auth: {{mode: oidc, tokens: [{{name: ci, sha256: {}}}], oidc: {{issuer: '{}', client_id: {}}}}}
scopes:
  admins: {{tokens: [ci]}}
  teams: [{{name: net, members: {{users: [alice]}}, domains: [networking]}}]",
        sha256_hex("ci-token"),
        issuer.unwrap_or(&provider.issuer),
        common::oidc_provider::CLIENT_ID,
    ))
    .unwrap();
    config.web.auth.oidc.as_mut().unwrap().client_secret = Some(CLIENT_SECRET.into());
    assert_eq!(config.web.problem(config.public_url.as_deref()), None);
    let state = AppState::new(store.clone(), Site::from_config(&config))
        .with_oidc()
        .unwrap();
    let router = web::router(state).into_make_service_with_connect_info::<SocketAddr>();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    let http = reqwest::Client::builder()
        .redirect(Policy::none())
        .build()
        .unwrap();
    Sso {
        base,
        store,
        database_url,
        http,
        provider,
    }
}

fn sha256_hex(text: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn location(response: &Response) -> String {
    response
        .headers()
        .get(LOCATION)
        .map(|l| l.to_str().unwrap().to_string())
        .unwrap_or_default()
}

/// The `name=value` of the response's cookie called `name`.
fn cookie(response: &Response, name: &str) -> Option<String> {
    response
        .headers()
        .get_all(SET_COOKIE)
        .iter()
        .map(|c| c.to_str().unwrap())
        .find(|c| c.starts_with(&format!("{name}=")))
        .map(|c| c.split(';').next().unwrap().to_string())
}

/// A sign-in begun at fleetglass and completed at the provider: the callback URL the
/// provider sends the browser to, and the browser's sign-in cookie.
async fn through_the_provider(sso: &Sso, next: &str, user: &User<'_>) -> (String, String) {
    let start = sso
        .http
        .get(format!("{}/auth/login?next={next}", sso.base))
        .send()
        .await
        .unwrap();
    assert_eq!(start.status(), StatusCode::SEE_OTHER);
    let login_cookie = cookie(&start, "fleetglass_login").expect("a sign-in cookie");
    let mut url = location(&start);
    assert!(url.contains("code_challenge_method=S256"), "{url}");
    assert!(url.contains("nonce="), "{url}");
    // The provider redirects to its login form.
    let mut page = sso.http.get(&url).send().await.unwrap();
    while page.status().is_redirection() {
        url = absolute(&url, &location(&page));
        page = sso.http.get(&url).send().await.unwrap();
    }
    let form = page.text().await.unwrap();
    let id = form
        .split("name=\"id\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the provider's login form");
    let mut answer = sso
        .http
        .post(absolute(&url, "/login/username"))
        .form(&[
            ("id", id),
            ("username", user.name),
            ("password", user.password),
        ])
        .send()
        .await
        .unwrap();
    loop {
        let next = absolute(&url, &location(&answer));
        assert!(
            answer.status().is_redirection(),
            "the provider refused: {next}"
        );
        if next.starts_with(&sso.base) {
            return (next, login_cookie);
        }
        url = next;
        answer = sso.http.get(&url).send().await.unwrap();
    }
}

/// `location` against the URL it was sent for.
fn absolute(from: &str, location: &str) -> String {
    if location.starts_with("http") {
        return location.to_string();
    }
    let origin: Vec<&str> = from.splitn(4, '/').take(3).collect();
    format!("{}{location}", origin.join("/"))
}

/// Signs `user` in; the session cookie (`name=value`) and where fleetglass sent the browser.
async fn sign_in(sso: &Sso, next: &str) -> (String, String) {
    let (callback, login_cookie) = through_the_provider(sso, next, &ALICE).await;
    let back = fetch(sso, &callback, &login_cookie).await;
    assert_eq!(back.status(), StatusCode::SEE_OTHER, "{callback}");
    let session = cookie(&back, "fleetglass_sso").expect("a session cookie");
    (session, location(&back))
}

async fn get(sso: &Sso, path: &str, cookie: &str) -> (StatusCode, String) {
    let response = fetch(sso, &format!("{}{path}", sso.base), cookie).await;
    (response.status(), response.text().await.unwrap())
}

/// GET `url` with these cookies, redirects not followed.
async fn fetch(sso: &Sso, url: &str, cookie: &str) -> Response {
    sso.http
        .get(url)
        .header(COOKIE, cookie)
        .send()
        .await
        .unwrap()
}

/// The audit trail's (actor, action, detail), oldest first, as the API shows it.
async fn audit(sso: &Sso) -> Vec<(String, String, String)> {
    let response = sso
        .http
        .get(format!("{}/api/v1/audit", sso.base))
        .bearer_auth("ci-token")
        .send()
        .await
        .unwrap();
    let body: serde_json::Value = response.json().await.unwrap();
    let mut events = common::web::audit_events(&body);
    events.reverse();
    events
}

#[tokio::test(flavor = "multi_thread")]
async fn signing_in_at_the_provider_opens_a_session_the_audit_trail_records() {
    let sso = start(None).await;
    // A page without a session goes to the provider, keeping where it was going.
    let (status, _) = get(&sso, "/domains", "").await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "no session: the API-like fetch is 401"
    );
    let page = sso
        .http
        .get(format!("{}/domains?x=1", sso.base))
        .header("accept", "text/html")
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::SEE_OTHER);
    assert_eq!(location(&page), "/auth/login?next=%2Fdomains%3Fx%3D1");

    let (session, landed) = sign_in(&sso, "%2Fdomains%3Fx%3D1").await;
    assert_eq!(landed, "/domains?x=1");
    let (status, body) = get(&sso, "/api/v1/fleet", &session).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, page) = get(&sso, "/", &session).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.contains("signed in with single sign-on"),
        "the footer says how"
    );
    assert!(
        page.contains("action=\"/sign-out\""),
        "a signed-in page offers signing out"
    );

    let events = audit(&sso).await;
    let sign_in = events.iter().find(|(_, action, _)| action == "sign-in");
    let (actor, _, detail) = sign_in.expect("the sign-in is in the audit trail");
    assert_eq!(actor, "alice", "named by the provider's preferred_username");
    assert!(
        detail.contains("single sign-on at http://localhost:"),
        "{detail}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_return_is_taken_once_and_only_in_the_browser_that_left() {
    let sso = start(None).await;
    let (callback, login_cookie) = through_the_provider(&sso, "%2F", &ALICE).await;
    // Another browser (no sign-in cookie, or another one) cannot take this return.
    for cookie in ["", "fleetglass_login=somebody-elses-state"] {
        let (status, page) = get(&sso, callback.trim_start_matches(&sso.base), cookie).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert!(page.contains("did not start in this browser"), "{page}");
    }
    let first = fetch(&sso, &callback, &login_cookie).await;
    assert_eq!(first.status(), StatusCode::SEE_OTHER);
    assert!(cookie(&first, "fleetglass_sso").is_some());
    let set: Vec<&str> = first
        .headers()
        .get_all(SET_COOKIE)
        .iter()
        .map(|c| c.to_str().unwrap())
        .collect();
    let session_cookie = set
        .iter()
        .find(|c| c.starts_with("fleetglass_sso="))
        .unwrap();
    assert!(
        session_cookie.contains("HttpOnly; SameSite=Lax"),
        "{session_cookie}"
    );
    assert!(
        set.contains(&"fleetglass_login=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax"),
        "{set:?}"
    );
    // The same return again (state replay): refused, nothing opened.
    let again = fetch(&sso, &callback, &login_cookie).await;
    assert_eq!(again.status(), StatusCode::UNAUTHORIZED);
    assert!(cookie(&again, "fleetglass_sso").is_none());
    assert!(again.text().await.unwrap().contains("already used"));
    let refused: Vec<String> = audit(&sso)
        .await
        .into_iter()
        .filter(|(_, action, _)| action == "sign-in-refused")
        .map(|(_, _, detail)| detail)
        .collect();
    assert_eq!(refused.len(), 3, "{refused:?}");
    let live = web_sessions::live(
        &mut sso.store.pool().acquire().await.unwrap(),
        chrono::Utc::now(),
    )
    .await
    .unwrap();
    assert_eq!(live.len(), 1, "one session for one sign-in");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_response_for_another_provider_or_an_error_signs_nobody_in() {
    let sso = start(None).await;
    let (callback, login_cookie) = through_the_provider(&sso, "%2F", &ALICE).await;
    // RFC 9207: a response naming another issuer is a mix-up, whatever it carries.
    let mixed = format!("{callback}&iss=https%3A%2F%2Fevil.example%2F");
    let (status, page) = get(&sso, mixed.trim_start_matches(&sso.base), &login_cookie).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(page.contains("meant for another provider"), "{page}");
    let denied = "/auth/callback?error=access_denied&error_description=no+thanks&state=x";
    let (status, page) = get(&sso, denied, &login_cookie).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(
        page.contains("the provider said access_denied: no thanks"),
        "{page}"
    );
    // A code without its sign-in (forged state) redeems nothing.
    let forged = "/auth/callback?code=made-up&state=made-up";
    let (status, _) = get(&sso, forged, "fleetglass_login=made-up").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

/// The provider rotates its signing key (the example server makes a new one, with a new key
/// id, at every start): the next sign-in's ID token names a key fleetglass has not fetched, and
/// it fetches the keys again instead of refusing.
#[tokio::test(flavor = "multi_thread")]
async fn a_rotated_signing_key_is_fetched_when_a_token_names_it() {
    let mut sso = start(None).await;
    let (before, _) = sign_in(&sso, "%2F").await;
    sso.provider.restart().await;
    let (after, _) = sign_in(&sso, "%2F").await;
    assert_ne!(before, after);
    assert_eq!(get(&sso, "/api/v1/fleet", &after).await.0, StatusCode::OK);
    let signed_in = audit(&sso)
        .await
        .into_iter()
        .filter(|(_, a, _)| a == "sign-in")
        .count();
    assert_eq!(signed_in, 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn where_to_go_next_never_leaves_the_site() {
    let sso = start(None).await;
    for next in [
        "https%3A%2F%2Fevil.example%2F",
        "%2F%2Fevil.example",
        "%2F%5Cevil.example",
    ] {
        let (_, landed) = sign_in(&sso, next).await;
        assert_eq!(landed, "/", "next={next}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn signing_out_or_a_revocation_ends_the_session_and_its_copies() {
    let sso = start(None).await;
    let (session, _) = sign_in(&sso, "%2F").await;
    let (_, page) = get(&sso, "/", &session).await;
    let csrf = page
        .split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the sign-out form's token")
        .to_string();
    let out = sso
        .http
        .post(format!("{}/sign-out", sso.base))
        .header(COOKIE, &session)
        .header("origin", &sso.base)
        .form(&[("csrf", csrf.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), StatusCode::SEE_OTHER);
    assert_eq!(
        location(&out),
        "/sign-in",
        "to a page that does not sign in again"
    );
    assert_eq!(
        cookie(&out, "fleetglass_sso").as_deref(),
        Some("fleetglass_sso=")
    );
    let (status, _) = get(&sso, "/api/v1/fleet", &session).await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "a copy of the cookie is dead too"
    );
    let (status, page) = get(&sso, "/sign-in", "").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.contains("/auth/login?next="),
        "the sign-in page offers the provider"
    );

    // An operator lists the live sessions and revokes every session of a person.
    let (session, _) = sign_in(&sso, "%2F").await;
    assert_eq!(get(&sso, "/api/v1/fleet", &session).await.0, StatusCode::OK);
    let (ok, listed) = sessions(&sso, &["list"]);
    assert!(ok && listed.starts_with("alice\tsince "), "{listed}");
    assert_eq!(
        listed.lines().count(),
        1,
        "the signed-out session is not live"
    );
    let (ok, said) = sessions(&sso, &["revoke", "alice"]);
    assert!(ok, "{said}");
    assert_eq!(said.trim(), "alice: 1 session(s) revoked");
    assert_eq!(
        get(&sso, "/api/v1/fleet", &session).await.0,
        StatusCode::UNAUTHORIZED
    );
    let (ok, said) = sessions(&sso, &["revoke", "alice"]);
    assert!(!ok && said.contains("alice has no live session"), "{said}");
    let actions: Vec<String> = audit(&sso).await.into_iter().map(|(_, a, _)| a).collect();
    assert_eq!(actions.iter().filter(|a| *a == "sign-in").count(), 2);
    assert_eq!(actions.iter().filter(|a| *a == "sign-out").count(), 1);
    assert_eq!(
        actions.iter().filter(|a| *a == "sessions-revoked").count(),
        1
    );
}

/// `fleetglass sessions ARGS` on the test's database: whether it succeeded, and what it
/// printed (stdout, else stderr).
fn sessions(sso: &Sso, args: &[&str]) -> (bool, String) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_fleetglass"))
        .arg("sessions")
        .args(args)
        .env("DATABASE_URL", &sso.database_url)
        .env("USER", "ops")
        .output()
        .unwrap();
    let out = match output.status.success() {
        true => output.stdout,
        false => output.stderr,
    };
    (
        output.status.success(),
        String::from_utf8_lossy(&out).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_ends_with_its_lifetime() {
    let sso = start(None).await;
    let (session, _) = sign_in(&sso, "%2F").await;
    let secret = session.split_once('=').unwrap().1;
    let hash: [u8; 32] = {
        use sha2::{Digest, Sha256};
        Sha256::digest(secret.as_bytes()).into()
    };
    let mut conn = sso.store.pool().acquire().await.unwrap();
    let now = chrono::Utc::now();
    let live = web_sessions::find(&mut conn, &hash, now).await.unwrap();
    let live = live.expect("the session is live now");
    assert_eq!(live.username, "alice");
    // At most the configured 12 hours, and no longer than the provider's ID token.
    assert!(live.expires_at <= now + chrono::TimeDelta::hours(12));
    let after = web_sessions::find(&mut conn, &hash, live.expires_at)
        .await
        .unwrap();
    assert_eq!(after, None, "gone at its expiry");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreachable_provider_is_named_and_everything_else_works() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let sso = start(Some(&format!("http://localhost:{closed}/"))).await;
    let start = sso
        .http
        .get(format!("{}/auth/login", sso.base))
        .send()
        .await
        .unwrap();
    assert_eq!(start.status(), StatusCode::BAD_GATEWAY);
    let page = start.text().await.unwrap();
    assert!(
        page.contains(&format!(
            "the sign-in provider http://localhost:{closed}/ cannot be reached"
        )),
        "{page}"
    );
    let api = sso
        .http
        .get(format!("{}/api/v1/fleet", sso.base))
        .bearer_auth("ci-token")
        .send()
        .await
        .unwrap();
    assert_eq!(api.status(), StatusCode::OK, "scripts' tokens still work");
}

/// Signs in at the provider's login form the browser is on (or is on its way to), and waits
/// until it is back at fleetglass, signed in.
pub(crate) async fn sign_in_at_the_form(client: &fantoccini::Client) {
    use crate::browser::wait_until;
    use fantoccini::Locator;
    wait_until("the provider's login form", || async {
        client.find(Locator::Css("input#username")).await.is_ok()
    })
    .await;
    let at = client.current_url().await.unwrap();
    assert_eq!(at.host_str(), Some("localhost"), "at the provider: {at}");
    for (css, text) in [
        ("input#username", ALICE.name),
        ("input#password", ALICE.password),
    ] {
        let field = client.find(Locator::Css(css)).await.unwrap();
        field.send_keys(text).await.unwrap();
    }
    let submit = client
        .find(Locator::Css("button[type=submit]"))
        .await
        .unwrap();
    submit.click().await.unwrap();
    wait_until("back at fleetglass, signed in", || async {
        let button = client.find(Locator::Css("header.top form.sign-out button"));
        button.await.is_ok()
    })
    .await;
}

/// In a real chromium: a page sends the browser to the provider's login form; signing in
/// there lands on the page asked for, signed in, seeing only her team's domain and refused
/// another's by URL; signing out lands on the sign-in page, which offers the provider again;
/// a revoked session sends the next page to the provider; the audit trail has all of it.
#[tokio::test(flavor = "multi_thread")]
async fn a_person_signs_in_at_the_providers_form_in_a_real_browser() {
    use crate::browser::{
        body_text, browser, screenshot, sign_out, start_chromedriver, wait_until,
    };
    use fantoccini::Locator;
    let sso = start(None).await;
    let (_driver, webdriver) = start_chromedriver().await;
    let profile = std::env::temp_dir().join(format!("fleetglass-sso-{}", std::process::id()));
    let client = browser(&webdriver, &profile).await;
    client.goto(&format!("{}/domains", sso.base)).await.unwrap();
    sign_in_at_the_form(&client).await;
    let here = client.current_url().await.unwrap();
    assert_eq!(here.as_str(), format!("{}/domains", sso.base));
    // A page with forms sets its CSRF cookie beside the session's, and leaves the session be.
    client.goto(&format!("{}/alerts", sso.base)).await.unwrap();
    client.goto(&format!("{}/domains", sso.base)).await.unwrap();
    // Her team's domain only; another's is not found, even by its URL.
    let domains = body_text(&client).await;
    assert!(
        domains.contains("networking") && !domains.contains("gateway"),
        "{domains}"
    );
    client
        .goto(&format!("{}/domains/gateway", sso.base))
        .await
        .unwrap();
    assert!(
        body_text(&client)
            .await
            .contains("no domain named \"gateway\"")
    );
    client.goto(&format!("{}/domains", sso.base)).await.unwrap();
    assert!(
        client
            .find(Locator::Css("header.top form.sign-out button"))
            .await
            .is_ok(),
        "still signed in after a page with forms"
    );
    let body = body_text(&client).await;
    assert!(body.contains("signed in with single sign-on") && body.contains("sign out alice"));
    screenshot(&client, "sso-signed-in").await;
    sign_out(&client).await;
    assert!(
        client.find(Locator::Css("a#sso")).await.is_ok(),
        "the provider is offered again"
    );
    // Signed in again, then revoked by an operator: the next page goes to the provider.
    client
        .find(Locator::Css("a#sso"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    sign_in_at_the_form(&client).await;
    let (ok, said) = sessions(&sso, &["revoke", "alice"]);
    assert!(ok, "{said}");
    client.goto(&format!("{}/domains", sso.base)).await.unwrap();
    wait_until("the provider asks again", || async {
        client.find(Locator::Css("input#username")).await.is_ok()
    })
    .await;
    let actions: Vec<(String, String)> = audit(&sso)
        .await
        .into_iter()
        .map(|(actor, action, _)| (actor, action))
        .collect();
    let expected = [
        ("alice", "sign-in"),
        ("alice", "sign-out"),
        ("alice", "sign-in"),
        ("ops (fleetglass sessions)", "sessions-revoked"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(actions, expected);
    client.close().await.unwrap();
    let _ = std::fs::remove_dir_all(&profile);
}

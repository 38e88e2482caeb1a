//! The dashboard in a real headless chromium, driven over WebDriver: every page loads, a
//! problem links to its root cause, live updates arrive by htmx without a reload, and the
//! screenshots in docs/ come from here (`FLEETGLASS_UPDATE_SCREENSHOTS=1` writes them; every
//! run writes target/screenshots/). Needs `scripts/deps browser` (chromium, chromium-driver).
//! One test binary, so chromium starts once.

use crate::common;

use common::web::{app, demo_config, fresh_store};
use fantoccini::{Client, ClientBuilder, Locator};
use fleetglass::app::{Collector, Source};
use std::net::SocketAddr;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Chromium flags for a machine without network: without them it hangs on lookups.
const CHROME_ARGS: [&str; 8] = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
];

/// Ends chromedriver and the chromium it started however the test ends: chromedriver leads a
/// process group of its own, and the whole group is killed (a failed test that never closed
/// its session would otherwise leave chromium running).
pub(crate) struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let group = format!("-{}", self.0.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub(crate) async fn start_chromedriver() -> (Driver, String) {
    let port = free_port();
    let child = Command::new("chromedriver")
        .arg(format!("--port={port}"))
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromedriver is not installed: run scripts/deps browser");
    let driver = Driver(child);
    let deadline = Instant::now() + Duration::from_secs(30);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            Instant::now() < deadline,
            "chromedriver did not start listening"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    (driver, format!("http://127.0.0.1:{port}"))
}

pub(crate) async fn browser(webdriver: &str, profile: &Path) -> Client {
    browser_with(webdriver, profile, &[]).await
}

/// A session with more chromium switches (`--blink-settings=preferredColorScheme=0`: the page
/// is told the system is dark).
async fn browser_with(webdriver: &str, profile: &Path, extra: &[&str]) -> Client {
    let mut args: Vec<String> = CHROME_ARGS.iter().map(|a| a.to_string()).collect();
    args.extend(extra.iter().map(|a| a.to_string()));
    args.push(format!("--user-data-dir={}", profile.display()));
    let mut capabilities = serde_json::Map::new();
    capabilities.insert(
        "goog:chromeOptions".into(),
        serde_json::json!({"args": args, "binary": "/usr/bin/chromium"}),
    );
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(capabilities)
        .connect(webdriver)
        .await
        .expect("start a chromium session")
}

/// The demo fleet served the way `fleetglass serve --demo` serves it, on a free port; also
/// the name of its database, and the collector (collecting while it is kept).
async fn serve_demo() -> (String, String, Collector) {
    let store = fresh_store().await;
    let database: String = sqlx::query_scalar!(r#"SELECT current_database() AS "database!""#)
        .fetch_one(store.pool())
        .await
        .unwrap();
    let config = demo_config();
    // As `serve --demo` does: 90 days of delivery history behind the rollout pages.
    let history = fleetglass::sources::demo::history::generate(chrono::Utc::now());
    assert!(store.seed_history(&history).await.unwrap());
    let collector = Collector::start(&config, store.clone(), Source::Demo, "browser".into());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let router = app(store, &config)
        .layer(axum::middleware::from_fn(hang_when_asked))
        .into_make_service_with_connect_info::<SocketAddr>();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (format!("http://{address}"), database, collector)
}

/// While set, the demo server takes every request and never answers: a hung server, which
/// no error event reveals to the page.
static HANG: AtomicBool = AtomicBool::new(false);

async fn hang_when_asked(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    if HANG.load(Ordering::SeqCst) {
        std::future::pending::<()>().await;
    }
    next.run(request).await
}

pub(crate) async fn wait_until<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(45);
    while !check().await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

pub(crate) async fn screenshot(client: &Client, name: &str) {
    let png = client.screenshot().await.unwrap();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("target/screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.png")), &png).unwrap();
    if std::env::var_os("FLEETGLASS_UPDATE_SCREENSHOTS").is_some() {
        std::fs::write(root.join(format!("docs/screenshot-{name}.png")), &png).unwrap();
    }
}

pub(crate) async fn body_text(client: &Client) -> String {
    client
        .find(Locator::Css("body"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_dashboard_in_a_real_browser() {
    let (base, database, _collector) = serve_demo().await;
    let (_driver, webdriver) = start_chromedriver().await;
    let profile = std::env::temp_dir().join(format!("fleetglass-chromium-{}", std::process::id()));
    let client = browser(&webdriver, &profile).await;
    client.set_window_size(1440, 1000).await.unwrap();

    // The runner writes the demo's first evaluation within a second or two.
    client.goto(&format!("{base}/")).await.unwrap();
    wait_until("the demo's root causes on the fleet page", || async {
        client.refresh().await.unwrap();
        body_text(&client).await.contains("problems affecting")
    })
    .await;
    let fleet = body_text(&client).await;
    for word in [
        "gateway",
        "networking",
        "observability",
        "tenants",
        " failed",
        "no authentication configured",
    ] {
        assert!(fleet.contains(word), "the fleet page shows {word:?}");
    }
    screenshot(&client, "fleet").await;

    // A live update arrives without a reload: a marker on the document survives the swap.
    let generated_at = || async {
        client
            .execute(
                "return document.querySelector('#fleet [data-generated-at]').dataset.generatedAt;",
                vec![],
            )
            .await
            .unwrap()
    };
    client
        .execute(
            "document.body.dataset.marker = 'kept'; return null;",
            vec![],
        )
        .await
        .unwrap();
    let before = generated_at().await;
    wait_until("an htmx refresh of the fleet fragment", || async {
        generated_at().await != before
    })
    .await;
    let marker = client
        .execute("return document.body.dataset.marker || null;", vec![])
        .await
        .unwrap();
    assert_eq!(
        marker, "kept",
        "the page was updated in place, not reloaded"
    );

    // From a problem to its root cause.
    client.goto(&format!("{base}/problems")).await.unwrap();
    let problems = body_text(&client).await;
    assert!(problems.contains("root cause"), "{problems}");
    screenshot(&client, "problems").await;
    let root = client
        .find(Locator::Css("article.problem a.root"))
        .await
        .unwrap();
    let label = root.text().await.unwrap();
    root.click().await.unwrap();
    wait_until("the root cause's object page", || async {
        client
            .current_url()
            .await
            .unwrap()
            .path()
            .starts_with("/objects/")
    })
    .await;
    let object = body_text(&client).await;
    assert!(
        object.contains(&label),
        "the object page is the cause's: {label}"
    );
    for section in ["revisions", "reconciled by", "conditions", "state timeline"] {
        assert!(object.contains(section), "object page has {section}");
    }
    screenshot(&client, "object").await;

    // Each page loads and answers in words.
    let pages = [
        ("/domains/gateway", "fully healthy on"),
        ("/clusters/prod-eu-1", "dependsOn tree"),
        ("/objects?state=failed", "match"),
    ];
    for (path, expected) in pages {
        client.goto(&format!("{base}{path}")).await.unwrap();
        let text = body_text(&client).await;
        assert!(text.contains(expected), "{path} shows {expected:?}");
    }
    // A fleet cell opens the domain filtered to that ring.
    client.goto(&format!("{base}/")).await.unwrap();
    client
        .find(Locator::Css("table.matrix a.cell"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_until("the domain page for a ring", || async {
        client
            .current_url()
            .await
            .unwrap()
            .query()
            .is_some_and(|q| q.starts_with("label="))
    })
    .await;
    assert!(body_text(&client).await.contains("only clusters with"));

    // The database stops answering: the refresh fails, and the page says how old its data is
    // instead of passing it off as current; when it answers again the warning goes.
    client.goto(&format!("{base}/")).await.unwrap();
    let warning = || async {
        client
            .execute(
                "const b = document.getElementById('refresh-failed'); return b.hidden ? null : b.textContent;",
                vec![],
            )
            .await
            .unwrap()
    };
    assert!(warning().await.is_null(), "no warning while refreshes work");
    common::set_database_outage(&database, true).await;
    wait_until("the refresh-failed warning", || async {
        !warning().await.is_null()
    })
    .await;
    let text = warning().await;
    let text = text.as_str().unwrap();
    assert!(
        text.contains("503") && text.contains("what you see is from"),
        "{text}"
    );
    screenshot(&client, "refresh-failed").await;
    common::set_database_outage(&database, false).await;
    wait_until("the warning cleared by a good refresh", || async {
        warning().await.is_null()
    })
    .await;

    // Issue 47: a hung server never answers, so no error event fires; the request times out
    // and the page says so, in a red banner (the `failed` colour), until a refresh lands.
    HANG.store(true, Ordering::SeqCst);
    wait_until("the hung-server warning", || async {
        warning()
            .await
            .as_str()
            .is_some_and(|text| text.contains("no answer within 10 s"))
    })
    .await;
    let colour = client
        .execute(
            "return getComputedStyle(document.getElementById('refresh-failed')).borderLeftColor;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(colour, "rgb(179, 38, 30)", "the banner is red");
    HANG.store(false, Ordering::SeqCst);
    wait_until("the warning cleared once the server answers", || async {
        warning().await.is_null()
    })
    .await;

    on_a_phone(&client, &base).await;
    contrast_holds(&client, &base, false).await;
    client.close().await.unwrap();
    let _ = std::fs::remove_dir_all(&profile);

    // The same pages with the system in dark mode.
    let dark_profile = profile.with_extension("dark");
    let dark = browser_with(
        &webdriver,
        &dark_profile,
        &["--blink-settings=preferredColorScheme=0"],
    )
    .await;
    contrast_holds(&dark, &base, true).await;
    screenshot(&dark, "fleet-dark").await;
    dark.close().await.unwrap();
    let _ = std::fs::remove_dir_all(dark_profile);
}

/// Every element's own text against what it is drawn on (its nearest opaque background), by
/// WCAG's relative luminance: those under 4.5:1, and whether the page is in dark mode.
const LOW_CONTRAST: &str = "
    const lum = c => {
        const [r, g, b] = c.match(/[\\d.]+/g).slice(0, 3).map(Number).map(v => {
            v /= 255;
            return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
        });
        return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const background = e => {
        for (; e; e = e.parentElement) {
            const c = getComputedStyle(e).backgroundColor;
            const parts = c.match(/[\\d.]+/g);
            if (parts && (parts.length < 4 || Number(parts[3]) > 0)) return c;
        }
        return 'rgb(255, 255, 255)';
    };
    const low = [];
    for (const e of document.querySelectorAll('body *')) {
        const own = [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
        if (!own || e.closest('.visually-hidden, [hidden], svg')) continue;
        const style = getComputedStyle(e);
        if (style.display === 'none' || style.visibility === 'hidden') continue;
        const [f, b] = [lum(style.color), lum(background(e))];
        const ratio = (Math.max(f, b) + 0.05) / (Math.min(f, b) + 0.05);
        if (ratio < 4.5) low.push(`${e.tagName}.${e.className} ${ratio.toFixed(2)}: ${e.textContent.trim().slice(0, 40)}`);
    }
    return {dark: matchMedia('(prefers-color-scheme: dark)').matches, low};";

/// Issue 47: every page's text is readable, light or dark, at 1280 and 390 px.
async fn contrast_holds(client: &Client, base: &str, dark: bool) {
    for (width, height) in [(1280, 900), (390, 844)] {
        client.set_window_size(width, height).await.unwrap();
        for path in [
            "/",
            "/problems",
            "/clusters",
            "/domains",
            "/alerts",
            "/objects/prod-eu-1/Deployment/flux-system/tofu-controller",
        ] {
            client.goto(&format!("{base}{path}")).await.unwrap();
            let found = client.execute(LOW_CONTRAST, vec![]).await.unwrap();
            assert_eq!(found["dark"], dark, "{path}: the colour scheme asked for");
            assert_eq!(
                found["low"],
                serde_json::json!([]),
                "{path} at {width} px (dark: {dark}): text under 4.5:1"
            );
        }
    }
}

/// Ten days ago, as `/?at=` takes it.
fn ten_days_ago() -> String {
    (chrono::Utc::now() - chrono::TimeDelta::days(10))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// `[scrollWidth, clientWidth]` of the page: wider content means sideways scrolling.
async fn widths(client: &Client) -> (i64, i64) {
    let value = client
        .execute(
            "const e = document.documentElement; return [e.scrollWidth, e.clientWidth];",
            vec![],
        )
        .await
        .unwrap();
    (value[0].as_i64().unwrap(), value[1].as_i64().unwrap())
}

/// Icons that are neither labelled nor followed by a word (none expected).
const UNLABELLED_ICONS: &str =
    "return Array.from(document.querySelectorAll('svg.icon')).filter(svg => {
  if (svg.getAttribute('role') === 'img') return !svg.getAttribute('aria-label');
  const next = svg.nextSibling;
  return svg.getAttribute('aria-hidden') !== 'true' || !next || !next.textContent.trim();
}).map(svg => svg.parentElement.outerHTML);";

/// Words the layout broke inside (a run of letters and digits drawn on two lines), outside
/// `pre` blocks: "de/gra/de/d" or "health/y" in a squeezed table cell. Only a word wider than
/// its whole line outside a table may break.
const SPLIT_WORDS: &str = "
    const split = [];
    const rects = (node, from, to) => {
        const range = document.createRange();
        range.setStart(node, from);
        range.setEnd(node, to);
        return [...range.getClientRects()].filter(r => r.width > 0);
    };
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (node.parentElement.closest('pre, [hidden], head, script, .visually-hidden')) continue;
        const block = node.parentElement.closest('td, th, li, p, dd, div, section, article');
        const cell = block && (block.tagName === 'TD' || block.tagName === 'TH');
        // Outside a table, a token wider than its whole line (a 40-digit commit id, an image
        // reference in a note) may break; a table cell must never be squeezed below a word.
        for (const token of node.textContent.matchAll(/\\S+/g)) {
            const drawn = rects(node, token.index, token.index + token[0].length);
            const width = drawn.reduce((sum, r) => sum + r.width, 0);
            if (!cell && block && width > block.clientWidth) continue;
            for (const m of token[0].matchAll(/[A-Za-z0-9]{2,}/g)) {
                const at = token.index + m.index;
                const tops = new Set(rects(node, at, at + m[0].length).map(r => Math.round(r.top)));
                if (tops.size > 1) split.push(m[0] + ' in ' + node.parentElement.tagName);
            }
        }
    }
    return split;";

/// The tofu-controller incident's row on `/`: its text, right edge and the page's width.
const TOFU_INCIDENT_ROW: &str = "
    const row = [...document.querySelectorAll('li.incident')]
        .find(r => r.textContent.includes('tofu-controller'));
    if (!row) return {};
    return {text: row.innerText, right: row.getBoundingClientRect().right,
            width: document.documentElement.clientWidth};";

/// At 390 px (an iPhone's width) no page scrolls sideways, the 404 and the sign-in (401)
/// pages included; every icon carries its state word or a label; a refresh keeps an open or
/// closed <details>, the focused link and the scroll position.
async fn on_a_phone(client: &Client, base: &str) {
    client.set_window_size(390, 844).await.unwrap();
    let signin = serve_tokens_mode().await;
    let pages = [
        format!("{base}/"),
        format!("{base}/problems"),
        format!("{base}/domains/gateway"),
        format!("{base}/domains/gateway?label=ring%3Dprod"),
        format!("{base}/clusters/prod-eu-1"),
        format!("{base}/clusters"),
        format!("{base}/domains"),
        format!("{base}/objects"),
        format!("{base}/objects?state=not-healthy"),
        format!("{base}/objects/prod-eu-1/Kustomization/flux-system/infra-network"),
        format!("{base}/objects/prod-eu-1/Deployment/flux-system/tofu-controller"),
        format!("{base}/owner/prod-eu-1/Kustomization/flux-system/infra-network"),
        format!("{base}/impact/prod-eu-1/Kustomization/flux-system/infra-network"),
        format!("{base}/alerts"),
        format!("{base}/no/such/page"),
        format!("{signin}/objects?state=failed"),
        format!("{base}/domains/gateway/rollouts"),
        format!("{base}/domains/gateway/rollouts/1.3.20"),
        format!("{base}/domains/gateway/delivery"),
        format!("{base}/?at={}", ten_days_ago()),
    ];
    for url in &pages {
        client.goto(url).await.unwrap();
        let (scroll, client_width) = widths(client).await;
        assert!(
            scroll <= client_width,
            "{url} scrolls sideways at 390 px: {scroll} > {client_width}"
        );
        let split = client.execute(SPLIT_WORDS, vec![]).await.unwrap();
        assert_eq!(
            split,
            serde_json::json!([]),
            "{url}: words broken inside at 390 px"
        );
        let unlabelled = client.execute(UNLABELLED_ICONS, vec![]).await.unwrap();
        assert_eq!(
            unlabelled,
            serde_json::json!([]),
            "{url}: icons without a word"
        );
        let nav = client
            .find(Locator::Css("header.top nav a[href='/alerts']"))
            .await;
        assert!(nav.is_ok(), "{url} has the site's navigation");
    }
    client.goto(&pages[15]).await.unwrap();
    assert!(
        body_text(client).await.contains("Sign in"),
        "a sign-in page, not a bare 401"
    );
    signs_in_and_out(client, &pages[15]).await;

    // The rollout timeline is drawn, inside the phone's width.
    client
        .goto(&format!("{base}/domains/gateway/rollouts/1.3.20"))
        .await
        .unwrap();
    let drawn = client
        .execute(
            "const svg = document.querySelector('svg.rollout-timeline');
             const box = svg.getBoundingClientRect();
             return {bars: svg.querySelectorAll('rect.bar').length, right: box.right,
                     width: document.documentElement.clientWidth,
                     text: svg.textContent};",
            vec![],
        )
        .await
        .unwrap();
    assert!(
        drawn["bars"].as_i64().unwrap() >= 5,
        "a bar per cluster: {drawn}"
    );
    assert!(
        drawn["right"].as_f64().unwrap() <= drawn["width"].as_f64().unwrap(),
        "the timeline fits 390 px: {drawn}"
    );
    assert!(
        drawn["text"]
            .as_str()
            .unwrap()
            .contains("prod · 3/3 fully healthy"),
        "{drawn}"
    );
    screenshot(client, "rollout-phone").await;

    for (path, name) in [("/", "fleet-phone"), ("/problems", "problems-phone")] {
        client.goto(&format!("{base}{path}")).await.unwrap();
        screenshot(client, name).await;
    }
    client
        .goto(&format!(
            "{base}/objects/prod-eu-1/Kustomization/flux-system/infra-network"
        ))
        .await
        .unwrap();
    screenshot(client, "object-phone").await;

    // The demo's tofu-controller outage is one incident row, inside the phone's width, its
    // state in words.
    client.goto(&format!("{base}/")).await.unwrap();
    let row = client.execute(TOFU_INCIDENT_ROW, vec![]).await.unwrap();
    let text = row["text"]
        .as_str()
        .expect("a tofu-controller incident row on /");
    assert!(
        text.contains("on 2 clusters (prod-eu-1, prod-eu-2)"),
        "{text}"
    );
    assert!(
        ["failed", "unverifiable"].iter().any(|w| text.contains(w)),
        "{text}"
    );
    assert!(
        row["right"].as_f64().unwrap() <= row["width"].as_f64().unwrap(),
        "the incident row fits 390 px: {row}"
    );

    // Refresh in place keeps what the reader did.
    client.goto(&format!("{base}/problems")).await.unwrap();
    let prepared = client
        .execute(
            "const d = document.querySelector('#problems details[open]');
             d.open = false;
             const link = document.querySelectorAll('#problems article.problem a.root')[1];
             link.focus();
             window.scrollTo(0, 700);
             return [window.scrollY, link.getAttribute('href'),
                     document.querySelector('#problems [data-generated-at]').dataset.generatedAt];",
            vec![],
        )
        .await
        .unwrap();
    let (scrolled, focused, before) = (
        prepared[0].as_f64().unwrap(),
        prepared[1].as_str().unwrap().to_string(),
        prepared[2].clone(),
    );
    assert!(
        scrolled > 300.0,
        "the page is long enough to scroll: {scrolled}"
    );
    wait_until("a refresh of the problems", || async {
        client
            .execute(
                "return document.querySelector('#problems [data-generated-at]').dataset.generatedAt;",
                vec![],
            )
            .await
            .unwrap()
            != before
    })
    .await;
    let after = client
        .execute(
            "const d = document.querySelectorAll('#problems details');
             return [window.scrollY, document.activeElement.getAttribute('href'),
                     Array.from(d).filter(x => x.dataset.key).length,
                     document.querySelector('#problems details').open];",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(after[0].as_f64().unwrap(), scrolled, "scroll position kept");
    assert_eq!(after[1].as_str(), Some(focused.as_str()), "focus kept");
    assert!(after[2].as_i64().unwrap() > 0);
    assert_eq!(after[3], false, "the closed <details> stays closed");

    // The same on a page that refreshes by hx-select (the domain page): an opened row stays.
    client
        .goto(&format!(
            "{base}/objects/prod-eu-1/Kustomization/flux-system/infra-network"
        ))
        .await
        .unwrap();
    let before = client
        .execute(
            "window.scrollTo(0, 400); return [window.scrollY, document.querySelector('#live [data-generated-at]').dataset.generatedAt];",
            vec![],
        )
        .await
        .unwrap();
    wait_until("a refresh of the object page", || async {
        client
            .execute(
                "return document.querySelector('#live [data-generated-at]').dataset.generatedAt;",
                vec![],
            )
            .await
            .unwrap()
            != before[1]
    })
    .await;
    let y = client
        .execute("return window.scrollY;", vec![])
        .await
        .unwrap();
    assert_eq!(
        y.as_f64(),
        before[0].as_f64(),
        "scroll kept across an hx-select refresh"
    );
}

/// On the sign-in page at `url`: the token signs in and lands on the page asked for, whose
/// header (still fitting the phone) has a sign-out button that ends the sign-in.
async fn signs_in_and_out(client: &Client, url: &str) {
    let token = client.find(Locator::Css("input#token")).await.unwrap();
    token.send_keys("password").await.unwrap();
    client
        .find(Locator::Css("form.sign-in button"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_until("signed in", || async {
        client
            .find(Locator::Css("header.top form.sign-out button"))
            .await
            .is_ok()
    })
    .await;
    assert_eq!(client.current_url().await.unwrap().as_str(), url);
    let (scroll, client_width) = widths(client).await;
    assert!(
        scroll <= client_width,
        "signed in, {scroll} > {client_width}"
    );
    sign_out(client).await;
    client.goto(url).await.unwrap();
    assert!(
        body_text(client).await.contains("Sign in"),
        "signed out: the page asks again"
    );
}

/// Clicks the header's sign-out button and waits for the sign-in page.
pub(crate) async fn sign_out(client: &Client) {
    client
        .find(Locator::Css("header.top form.sign-out button"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_until("signed out", || async {
        client.current_url().await.unwrap().path() == "/sign-in"
    })
    .await;
}

/// An empty fleetglass in tokens mode, for its sign-in page.
async fn serve_tokens_mode() -> String {
    let store = fresh_store().await;
    let mut config = demo_config();
    config.web = fleetglass::yaml::from_str(
        "auth: {mode: tokens, tokens: [{name: ci, sha256: 5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8}]}",
    )
    .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let router = app(store, &config).into_make_service_with_connect_info::<SocketAddr>();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    format!("http://{address}")
}

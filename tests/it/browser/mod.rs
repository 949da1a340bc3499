//! The Board in a real browser: headless Chromium, driven over WebDriver (fantoccini)
//! through a chromedriver the test starts itself, against the real app and database of
//! [`crate::harness`]. Chromium and chromedriver must be installed (Debian packages
//! `chromium` and `chromium-driver`; scripts/test installs them): without them these
//! tests fail, they never skip. Screenshots are kept under `<target dir>/board-screenshots`.

mod dead_view;
mod driver;
mod queues_view;

use std::path::PathBuf;
use std::time::Duration;

use base64::Engine;
use fantoccini::elements::Element;
use fantoccini::wd::WebDriverCompatibleCommand;
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::json;

use crate::harness::TestApp;
use crate::harness::wait::try_wait_until;
use driver::Chromedriver;

/// How long the browser gets for a page to change as expected (generous: CI runs tests
/// side by side on two cores).
const PATIENCE: Duration = Duration::from_secs(20);

/// How often a page wait looks again.
const LOOK_EVERY: Duration = Duration::from_millis(50);

/// The screens the Board is looked at on.
#[derive(Debug, Clone, Copy)]
pub enum Screen {
    /// 390 × 844, a phone held upright.
    Phone,
    /// 1280 × 900.
    Desktop,
}

impl Screen {
    /// Width and height in CSS pixels.
    pub fn size(self) -> (u32, u32) {
        match self {
            Screen::Phone => (390, 844),
            Screen::Desktop => (1280, 900),
        }
    }

    /// `Emulation.setDeviceMetricsOverride`'s parameters for this screen.
    fn metrics(self) -> serde_json::Value {
        let (width, height) = self.size();
        json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": matches!(self, Screen::Phone)})
    }
}

/// A Chrome DevTools Protocol command, sent through chromedriver. The viewport is set
/// this way because a desktop window, headless or not, is never narrower than about
/// 500 pixels; and only this way does a screenshot take in the whole page.
#[derive(Debug)]
struct Cdp {
    cmd: &'static str,
    params: serde_json::Value,
}

impl WebDriverCompatibleCommand for Cdp {
    fn endpoint(&self, base: &url::Url, session: Option<&str>) -> Result<url::Url, url::ParseError> {
        base.join(&format!("session/{}/goog/cdp/execute", session.unwrap_or_default()))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(json!({"cmd": self.cmd, "params": self.params}).to_string()))
    }
}

/// One headless Chromium session on the app under test.
pub struct Browser {
    client: Client,
    base: String,
    shots: PathBuf,
    // Dropped after the client: stops chromedriver and the browser.
    _driver: Chromedriver,
}

impl Browser {
    /// Starts chromedriver and a Chromium session, its viewport phone-sized.
    pub async fn open(app: &TestApp) -> Browser {
        let chromium = driver::chromium();
        let chromedriver = Chromedriver::start().await;
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": chromium,
                "args": driver::chromium_args(&chromedriver.profile, Screen::Desktop.size()),
            }),
        );
        let client = ClientBuilder::new(HttpConnector::new())
            .capabilities(caps)
            .connect(&chromedriver.url)
            .await
            .unwrap_or_else(|e| panic!("start a Chromium session through chromedriver at {}: {e}", chromedriver.url));
        let browser =
            Browser { client, base: app.base.clone(), shots: driver::screenshot_dir(), _driver: chromedriver };
        browser.view_as(Screen::Phone).await;
        browser
    }

    /// Signs `email` in through the form, as a person would (checking the form carries
    /// its CSRF token), and waits for the Board's first page.
    pub async fn sign_in(&self, email: &str, password: &str) {
        self.goto("/login").await;
        self.one("form input[name=email]").await.send_keys(email).await.expect("type the email");
        self.one("form input[name=password]").await.send_keys(password).await.expect("type the password");
        let csrf = self.one("form input[name=csrf_token]").await;
        assert!(!csrf.prop("value").await.expect("token value").unwrap_or_default().is_empty(), "the form has a token");
        self.one("form button[type=submit]").await.click().await.expect("press Sign in");
        self.wait_for_location("/todos").await;
    }

    /// Loads `path` on the app.
    pub async fn goto(&self, path: &str) {
        let url = format!("{}{path}", self.base);
        self.client.goto(&url).await.unwrap_or_else(|e| panic!("load {url}: {e}"));
    }

    /// The current page's path and query (`/todos?filter=dead`).
    pub async fn location(&self) -> String {
        let url = self.client.current_url().await.expect("current URL");
        match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_owned(),
        }
    }

    /// Waits until the page is at `path_and_query`.
    pub async fn wait_for_location(&self, path_and_query: &str) {
        let arrived = try_wait_until(PATIENCE, LOOK_EVERY, async || {
            let here = self.location().await;
            if here == path_and_query { Ok(()) } else { Err(here) }
        })
        .await;
        if let Err(here) = arrived {
            panic!("expected to be at {path_and_query}, still at {here}; {}", self.evidence("wrong-page").await);
        }
    }

    /// Every element matching the CSS selector `css`.
    pub async fn all(&self, css: &str) -> Vec<Element> {
        self.client.find_all(Locator::Css(css)).await.unwrap_or_else(|e| panic!("find {css}: {e}"))
    }

    /// The one element matching `css`; fails (with a screenshot) when there is none.
    pub async fn one(&self, css: &str) -> Element {
        match self.all(css).await.into_iter().next() {
            Some(found) => found,
            None => panic!("nothing matches {css}; {}", self.evidence("missing-element").await),
        }
    }

    /// Every element matching the XPath `xpath`.
    pub async fn all_xpath(&self, xpath: &str) -> Vec<Element> {
        self.client.find_all(Locator::XPath(xpath)).await.unwrap_or_else(|e| panic!("find {xpath}: {e}"))
    }

    /// Waits until nothing matches the XPath `xpath` (the page has changed); `what` names
    /// the evidence left when it does not happen.
    pub async fn wait_until_gone(&self, xpath: &str, what: &str) {
        let gone = try_wait_until(PATIENCE, LOOK_EVERY, async || {
            let left = self.all_xpath(xpath).await.len();
            if left == 0 { Ok(()) } else { Err(format!("{left} still match")) }
        })
        .await;
        if let Err(left) = gone {
            panic!("{xpath}: {left}; {}", self.evidence(what).await);
        }
    }

    /// Makes the page's viewport `screen` (CSS pixels, one device pixel each); a phone
    /// also honours the page's `<meta name="viewport">` as a phone's browser does.
    pub async fn view_as(&self, screen: Screen) {
        let cmd = Cdp { cmd: "Emulation.setDeviceMetricsOverride", params: screen.metrics() };
        self.client.issue_cmd(cmd).await.unwrap_or_else(|e| panic!("emulate {screen:?}: {e}"));
    }

    /// The whole page (not only the viewport) as PNG.
    async fn full_page(&self) -> Result<Vec<u8>, String> {
        let cmd =
            Cdp { cmd: "Page.captureScreenshot", params: json!({"format": "png", "captureBeyondViewport": true}) };
        let answer = self.client.issue_cmd(cmd).await.map_err(|e| e.to_string())?;
        let data = answer["data"].as_str().ok_or_else(|| format!("no screenshot data in {answer}"))?;
        base64::engine::general_purpose::STANDARD.decode(data).map_err(|e| e.to_string())
    }

    /// Saves a screenshot of the whole page as `<name>.png`; returns its path.
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        let png = self.full_page().await.unwrap_or_else(|e| panic!("screenshot: {e}"));
        let path = self.shots.join(format!("{name}.png"));
        std::fs::write(&path, png).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        path
    }

    /// What a failing test leaves behind: a screenshot and the page source, named by
    /// `what`; returns a sentence saying where they are.
    pub async fn evidence(&self, what: &str) -> String {
        let here = self.client.current_url().await.map(|u| u.to_string()).unwrap_or_default();
        let shot = self.full_page().await.ok().map(|png| {
            let path = self.shots.join(format!("failure-{what}.png"));
            let _ = std::fs::write(&path, png);
            path
        });
        let source = self.client.source().await.unwrap_or_default();
        let html = self.shots.join(format!("failure-{what}.html"));
        let _ = std::fs::write(&html, &source);
        format!("the browser was at {here}; screenshot {shot:?}, page source {}", html.display())
    }

    /// Ends the session (the browser quits); chromedriver stops on drop.
    pub async fn close(self) {
        let Browser { client, _driver, .. } = self;
        client.close().await.expect("end the WebDriver session");
    }
}

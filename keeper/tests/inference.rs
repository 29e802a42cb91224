//! Inference on the wire: what a model answer becomes on chain, how a rate-limited server is
//! waited out, and HTTPS for both the model and the RPC through a test CA trusted via the
//! environment. Real anvil, real contracts, real loopback servers (plain and TLS); no mocks.
//! Time never decides an outcome: chain time is a count of blocks (`common::world`), the
//! timing assertion is a lower bound measured by the server's own clock (the keeper must not
//! retry earlier than `Retry-After` told it) with a 30 s ceiling far above the 1 s asked for,
//! and every answer is served on loopback far inside the 10 s inference timeout.
// Each test runs on its own runtime; the std lock held across awaits is exactly what serialises
// them (no task inside one runtime ever contends for it).
#![allow(clippy::await_holding_lock)]

mod common;

use common::{
    decisions, offchain, root, serial, serve_inference, test_pki, tls_proxy, world, Canned,
};
use keeper::{
    cli::InferenceOptions,
    recorder::feed,
    strategy::{openai::OpenAiClient, Model},
};
use serde_json::json;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

fn openai(url: &str, timeout: Duration) -> Model {
    Model::OpenAi(
        OpenAiClient::new(url, "test-model", timeout, InferenceOptions::default()).unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_that_arrived_is_submitted_verbatim_and_only_transport_failures_stay_off_chain(
) {
    let _g = serial();
    let w = world(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let expiry = w.chain_time().await.unwrap() + 86_400;
    // Seven books asking 0.40: a BUY_UP on any of them passes every rule (reason 0).
    for _ in 0..7 {
        let m = w.create_market(10_000, 100, 0, expiry).await.unwrap();
        w.ask(m, 400_000, 20_000_000).await.unwrap();
    }
    let tool_call = json!({
        "role": "assistant",
        "content": null,
        "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "answer", "arguments": "{\"side\": \"up\"}"}}],
    });
    // Markets are asked in discovery order, one at a time (concurrency 1).
    let server = serve_inference(
        vec![
            Canned::content(""),
            Canned::message(tool_call),
            Canned::content("I would buy UP here."),
            Canned::content("{\"verdict\": \"BUY_UP\"}"),
            Canned::content("{\"verdict\":\"BUY_UP\",\"confidence\":0.9}"),
            Canned::status("500 Internal Server Error", "{\"error\":\"overloaded\"}"),
            Canned::status(
                "200 OK",
                "{\"choices\":[{\"index\":0,\"finish_reason\":\"content_filter\"}]}",
            ),
        ],
        None,
    )
    .await;
    let mut k = w.keeper(Some(dir.path().to_path_buf()));
    k.concurrency = 1;
    let r = k
        .cycle(&openai(&server.url, Duration::from_secs(10)), None, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!((r.asked, r.submitted, r.offchain_failures), (7, 5, 2));

    // The request asked for the object schema by default.
    let first: serde_json::Value =
        serde_json::from_str(&server.exchanges()[0].request_body).unwrap();
    assert_eq!(first["response_format"]["json_schema"]["schema"]["type"], "object");
    assert_eq!(first["response_format"]["json_schema"]["strict"], true);

    let rows = feed::read_feed(&dir.path().join("feed.jsonl")).unwrap();
    let ds = decisions(&rows);
    let got: Vec<(Option<&str>, u8)> = ds.iter().map(|d| (d.raw.as_deref(), d.reason)).collect();
    // Reason 11 is the gate's "not one of the three verdicts"; the object's verdict string is
    // submitted alone and passes: ask 0.40 -> price 400000, quantity 10e6, cost 4e6.
    assert_eq!(
        got,
        vec![
            (Some(""), 11),
            (Some("{\"side\": \"up\"}"), 11),
            (Some("I would buy UP here."), 11),
            (Some("BUY_UP"), 0),
            (Some("{\"verdict\":\"BUY_UP\",\"confidence\":0.9}"), 11),
        ]
    );
    assert_eq!((ds[3].price_paid.as_str(), ds[3].cost.as_str()), ("400000", "4000000"));

    let off = offchain(&rows);
    assert_eq!(off.len(), 2);
    assert_eq!(off[0].transport.http_status, Some(500));
    assert_eq!(off[0].transport.body.as_deref(), Some("{\"error\":\"overloaded\"}"));
    assert_eq!(off[0].transport.attempt, Some(1), "a 500 is not retried");
    assert!(off[0].error.contains("HTTP 500"), "{}", off[0].error);
    assert_eq!(off[1].transport.http_status, Some(200));
    assert_eq!(off[1].transport.finish_reason.as_deref(), Some("content_filter"));
    assert!(off[1].error.contains("no choices[0].message"), "{}", off[1].error);
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limits_are_waited_out_as_the_server_says_and_bounded() {
    let _g = serial();
    let w = world(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let expiry = w.chain_time().await.unwrap() + 86_400;
    for _ in 0..2 {
        let m = w.create_market(10_000, 100, 0, expiry).await.unwrap();
        w.ask(m, 400_000, 20_000_000).await.unwrap();
    }
    let busy = || Canned::status("503 Service Unavailable", "{\"error\":\"busy\"}");
    let server = serve_inference(
        vec![
            // First market: told to come back in 1 s, then answered.
            Canned::status("429 Too Many Requests", "{\"error\":\"slow down\"}")
                .header("retry-after", "1"),
            Canned::content("{\"verdict\":\"BUY_UP\"}"),
            // Second market: busy on every attempt, no Retry-After: backoff, then given up.
            busy(),
            busy(),
            busy(),
            busy(),
        ],
        None,
    )
    .await;
    let mut k = w.keeper(Some(dir.path().to_path_buf()));
    k.concurrency = 1;
    let r = k
        .cycle(&openai(&server.url, Duration::from_secs(10)), None, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!((r.asked, r.submitted, r.offchain_failures), (2, 1, 1));

    let ex = server.exchanges();
    assert_eq!(ex.len(), 6, "1 + 1 retry for the first market, 4 attempts for the second");
    let waited = ex[1].arrived.duration_since(ex[0].answered);
    assert!(waited >= Duration::from_secs(1), "retried after {waited:?}, before Retry-After: 1");
    assert!(waited < Duration::from_secs(30), "a 1 s Retry-After took {waited:?}");

    let rows = feed::read_feed(&dir.path().join("feed.jsonl")).unwrap();
    let ds = decisions(&rows);
    assert_eq!(ds.len(), 1);
    assert_eq!((ds[0].raw.as_deref(), ds[0].reason), (Some("BUY_UP"), 0));
    let off = offchain(&rows);
    assert_eq!(off.len(), 1);
    assert_eq!((off[0].transport.http_status, off[0].transport.attempt), (Some(503), Some(4)));
    assert_eq!(off[0].transport.body.as_deref(), Some("{\"error\":\"busy\"}"));
    w.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_rpc_and_inference_work_with_a_ca_trusted_through_ssl_cert_file() {
    let _g = serial();
    let w = world(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let expiry = w.chain_time().await.unwrap() + 86_400;
    let m = w.create_market(10_000, 100, 0, expiry).await.unwrap();
    w.ask(m, 400_000, 20_000_000).await.unwrap();

    let pki = test_pki();
    let ca_file = dir.path().join("test-ca.pem");
    std::fs::write(&ca_file, &pki.ca_pem).unwrap();
    let model = serve_inference(
        vec![Canned::content("{\"verdict\":\"BUY_UP\"}")],
        Some(pki.acceptor.clone()),
    )
    .await;
    assert!(model.url.starts_with("https://127.0.0.1:"));
    let anvil_addr = format!(
        "{}:{}",
        w.anvil.url.host_str().unwrap(),
        w.anvil.url.port_or_known_default().unwrap()
    );
    let rpc = format!("https://127.0.0.1:{}", tls_proxy(pki.acceptor.clone(), anvil_addr).await);
    let results = dir.path().join("results");

    // A child process, so the TLS roots come from a clean environment.
    let keeper = |trust_test_ca: bool| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_keeper"));
        cmd.arg("--root")
            .arg(root())
            .args(["run", "--once", "--rpc-url", &rpc, "--model", "openai"])
            .args(["--openai-url", &model.url, "--openai-model", "test-model"])
            .arg("--gate")
            .arg(w.deployment.gate.to_string())
            .arg("--results")
            .arg(&results)
            .env("KEEPER_PRIVATE_KEY", w.anvil.dev_key(0).unwrap())
            .env_remove("KEEPER_OPENAI_API_KEY")
            .env_remove("SSL_CERT_DIR")
            .env_remove("SSL_CERT_FILE");
        if trust_test_ca {
            cmd.env("SSL_CERT_FILE", &ca_file);
        }
        let out = cmd.output().unwrap();
        (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).to_string())
    };

    // Without the test CA the node is unreachable, and the error names the real cause.
    let (code, err) = keeper(false);
    assert_ne!(code, 0, "{err}");
    assert!(err.contains("cannot reach the RPC at https://127.0.0.1:"), "{err}");
    assert!(err.contains("certificate"), "the TLS cause is shown, not cut off: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(model.exchanges().is_empty());

    // With it, both endpoints speak HTTPS and the answer reaches the chain.
    let (code, err) = keeper(true);
    assert_eq!(code, 0, "{err}");
    assert_eq!(model.exchanges().len(), 1, "the model was asked over TLS");
    let rows = feed::read_feed(&results.join("feed.jsonl")).unwrap();
    let ds = decisions(&rows);
    assert_eq!(ds.len(), 1, "{err}");
    assert_eq!((ds[0].raw.as_deref(), ds[0].reason), (Some("BUY_UP"), 0));
    assert_eq!(ds[0].market, m.to_checksum(None));
    assert!(offchain(&rows).is_empty());
    w.stop().await;
}

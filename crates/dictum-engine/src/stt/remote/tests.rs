use super::*;
use crate::config::SttBackend;

fn openai(url: &str) -> SttConfig {
    SttConfig {
        backend: SttBackend::Openai,
        url: url.into(),
        ..SttConfig::default()
    }
}

#[test]
fn https_is_required_off_this_machine() {
    assert!(validate(&openai("http://127.0.0.1:8080")).is_ok());
    assert!(validate(&openai("https://gpu-box.lan:8000/v1")).is_ok());
    let (key, why) = validate(&openai("http://gpu-box.lan:8000")).expect_err("http");
    assert_eq!(key, "stt.url");
    assert!(why.contains("allow_insecure"), "{why}");
    let mut c = openai("http://gpu-box.lan:8000");
    c.allow_insecure = true;
    assert!(validate(&c).is_ok());
    // The local backend never talks to the URL: not checked.
    let mut c = openai("http://gpu-box.lan:8000");
    c.backend = SttBackend::Local;
    assert!(validate(&c).is_ok());
    let (_, why) = validate(&openai("http://u:hunter2@127.0.0.1/")).expect_err("creds");
    assert!(
        !why.contains("hunter2") && why.contains("stt.api_key_env"),
        "{why}"
    );
}

#[test]
fn endpoints_with_or_without_v1() {
    let u = |s: &str| Url::parse(s).expect("url");
    assert_eq!(
        endpoint(&u("http://h:8080"), "audio/transcriptions").as_str(),
        "http://h:8080/v1/audio/transcriptions"
    );
    assert_eq!(
        endpoint(&u("https://api.groq.com/openai/v1/"), "models").as_str(),
        "https://api.groq.com/openai/v1/models"
    );
}

/// A one-request HTTP stand-in (declared: a loopback socket in this test, not a speech
/// server): answers `status` with `body`, and hands back the request line and the body.
fn one_request_server(
    status: &'static str,
    body: &'static str,
) -> (String, std::thread::JoinHandle<(String, String)>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let handle = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().expect("accept");
        let mut got = Vec::new();
        let mut buf = [0u8; 65536];
        let head_end = loop {
            let n = conn.read(&mut buf).expect("read");
            assert!(n > 0, "connection closed mid-request");
            got.extend_from_slice(&buf[..n]);
            if let Some(i) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
        };
        let head = String::from_utf8_lossy(&got[..head_end]).to_string();
        let len: usize = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse().ok())?
            })
            .unwrap_or(0);
        while got.len() < head_end + len {
            let n = conn.read(&mut buf).expect("read body");
            assert!(n > 0, "connection closed mid-body");
            got.extend_from_slice(&buf[..n]);
        }
        let answer = format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        conn.write_all(answer.as_bytes()).expect("answer");
        let line = head.lines().next().unwrap_or_default().to_string();
        (line, String::from_utf8_lossy(&got[head_end..]).to_string())
    });
    (url, handle)
}

#[test]
fn translate_goes_to_the_translations_endpoint_without_a_language() {
    let speech = vec![0.1f32; 16_000];
    let (url, server) = one_request_server("200 OK", r#"{"text":" Good morning. "}"#);
    let mut c = openai(&url);
    c.language = "de".into();
    c.upload = SttUpload::Wav;
    let mut remote = RemoteStt::new(&c).expect("client");
    remote.set_task(SttTask::Translate);
    let out = remote.transcribe(&speech, "").expect("answer");
    assert_eq!(out.text, "Good morning.");
    let (line, body) = server.join().expect("server");
    assert!(line.starts_with("POST /v1/audio/translations "), "{line}");
    assert!(
        !body.contains("name=\"language\""),
        "no language field: {body:.300}"
    );
    // Transcribing goes where it always went, with the language.
    let (url, server) = one_request_server("200 OK", r#"{"text":"Guten Morgen."}"#);
    let mut c = openai(&url);
    c.language = "de".into();
    c.upload = SttUpload::Wav;
    let remote = RemoteStt::new(&c).expect("client");
    remote.transcribe(&speech, "").expect("answer");
    let (line, body) = server.join().expect("server");
    assert!(line.starts_with("POST /v1/audio/transcriptions "), "{line}");
    assert!(body.contains("name=\"language\""), "{body:.300}");
}

#[test]
fn a_server_without_translations_is_refused_saying_so() {
    let (url, server) = one_request_server("404 Not Found", "Not Found");
    let mut c = openai(&url);
    c.task = SttTask::Translate;
    c.upload = SttUpload::Wav;
    let remote = RemoteStt::new(&c).expect("client");
    let err = remote
        .transcribe(&[0.1f32; 16_000], "")
        .expect_err("404")
        .to_string();
    server.join().expect("server");
    assert!(err.contains("no /v1/audio/translations endpoint"), "{err}");
    assert!(err.contains("cannot translate"), "{err}");
    assert!(!err.contains('\n'), "one line: {err}");
}

#[test]
fn answers_plain_and_verbose_and_garbage() {
    let out = parse_answer(br#"{"text":" Hello there. "}"#).expect("plain");
    assert_eq!(out.text, "Hello there.");
    assert_eq!(out.segments, 0);
    let out = parse_answer(
        br#"{"language":"english","text":"a b","segments":[{"end":1.5,"no_speech_prob":0.1},{"end":3.25,"no_speech_prob":0.4}]}"#,
    )
    .expect("verbose");
    assert_eq!(out.end_ms, Some(3250));
    assert!((out.no_speech_prob - 0.4).abs() < 1e-6);
    assert_eq!(out.language.as_deref(), Some("english"));
    assert_eq!(
        parse_answer(b"<html>502 Bad Gateway</html>")
            .expect_err("html")
            .kind(),
        "garbage"
    );
    assert_eq!(
        parse_answer(br#"{"txt":"x"}"#).expect_err("no text").kind(),
        "garbage"
    );
    assert_eq!(
        parse_answer(b"{\"text\":\"a\\u001b[2Jb\"}")
            .expect("ctl")
            .text,
        "a[2Jb"
    );
}

#[test]
fn wav_header_is_what_hound_reads() {
    let samples: Vec<f32> = (0..1600).map(|i| (i as f32 / 100.0).sin() * 0.5).collect();
    let bytes = wav_bytes(&samples);
    let r = hound::WavReader::new(std::io::Cursor::new(bytes)).expect("wav");
    assert_eq!(r.spec().sample_rate, 16_000);
    assert_eq!(r.spec().channels, 1);
    assert_eq!(r.len(), 1600);
}

#[test]
fn what_counts_as_a_flac_refusal() {
    let http = |status: u16, body: &str| RemoteError::Http {
        status,
        body: body.into(),
    };
    assert!(refuses_flac(&http(415, "Unsupported media type")));
    assert!(refuses_flac(&http(400, "Invalid request")));
    assert!(refuses_flac(&http(422, "file: could not decode audio")));
    assert!(refuses_flac(&RemoteError::Garbage(
        "no \"text\" field".into()
    )));
    // About the key, or not about the request at all: WAV would not help.
    assert!(!refuses_flac(&http(400, "Invalid API key provided")));
    assert!(!refuses_flac(&http(422, "missing bearer token")));
    assert!(!refuses_flac(&http(500, "CUDA out of memory")));
    assert!(!refuses_flac(&http(404, "not found")));
    assert!(!refuses_flac(&RemoteError::Auth { status: 401 }));
    assert!(!refuses_flac(&RemoteError::Timeout {
        url: "u".into(),
        ms: 1
    }));
}

#[test]
fn the_format_follows_the_setting_and_what_the_server_took() {
    let mut c = openai("http://127.0.0.1:9/only-this-test");
    let remote = |c: &SttConfig| RemoteStt::new(c).expect("client");
    assert_eq!(
        remote(&c).upload_format(),
        Upload::Flac,
        "auto starts with FLAC"
    );
    c.upload = SttUpload::Wav;
    assert_eq!(remote(&c).upload_format(), Upload::Wav);
    let flac_only = {
        let mut c = c.clone();
        c.upload = SttUpload::Flac;
        remote(&c)
    };
    c.upload = SttUpload::Auto;
    let auto = remote(&c);
    remember_wants_wav(auto.transcriptions.as_str());
    assert_eq!(auto.upload_format(), Upload::Wav, "remembered");
    assert_eq!(
        remote(&c).upload_format(),
        Upload::Wav,
        "per URL, not per client"
    );
    assert_eq!(flac_only.upload_format(), Upload::Flac, "flac means flac");
    assert_eq!(
        remote(&openai("http://127.0.0.1:9/another")).upload_format(),
        Upload::Flac
    );
}

#[test]
fn wav_and_flac_carry_the_same_samples() {
    let samples: Vec<f32> = (0..20_000).map(|i| (i as f32 / 37.0).sin() * 1.2).collect();
    let pcm = pcm16(&samples);
    let wav: Vec<i16> = hound::WavReader::new(std::io::Cursor::new(wav_bytes(&samples)))
        .expect("wav")
        .into_samples::<i16>()
        .map(|s| s.expect("sample"))
        .collect();
    assert_eq!(wav, pcm);
    let flac: Vec<i16> = claxon::FlacReader::new(std::io::Cursor::new(Upload::Flac.encode(&pcm)))
        .expect("flac")
        .samples()
        .map(|s| s.expect("sample") as i16)
        .collect();
    assert_eq!(flac, pcm);
}

#[test]
fn error_bodies_are_one_short_line() {
    assert_eq!(
        error_message(r#"{"error":{"message":"Invalid model","type":"x"}}"#),
        "Invalid model"
    );
    assert_eq!(
        error_message(r#"{"error":"no 'file' field"}"#),
        "no 'file' field"
    );
    assert!(error_message(&"x\n".repeat(1000)).chars().count() <= 201);
}

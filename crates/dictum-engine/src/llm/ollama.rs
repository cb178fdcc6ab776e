//! Ollama's native API: `/api/chat` or `/api/generate` with `options.num_ctx`, `keep_alive`,
//! sampling options; `/api/ps` for residency. Durations in answers are nanoseconds.

use super::config::{LlmConfig, OllamaEndpoint, RequestOptions};
use super::prompt::Message;
use super::{
    get_capped, http_error, json_snippet, post_json, Backend, Completion, LlmError, Residency,
};
use serde_json::{json, Value};

pub struct Ollama {
    client: reqwest::Client,
    base: String,
    model: String,
    endpoint: OllamaEndpoint,
}

impl Ollama {
    pub fn new(client: reqwest::Client, config: &LlmConfig) -> Ollama {
        Ollama {
            client,
            base: config.url.trim_end_matches('/').to_string(),
            model: config.model.clone(),
            endpoint: config.ollama_endpoint,
        }
    }
}

fn ns_to_ms(v: &Value) -> Option<f64> {
    v.as_f64().map(|ns| ns / 1e6)
}

/// Ollama's names match with an implicit ":latest".
fn same_model(a: &str, b: &str) -> bool {
    let full = |s: &str| {
        if s.contains(':') {
            s.to_string()
        } else {
            format!("{s}:latest")
        }
    };
    full(a) == full(b)
}

impl Backend for Ollama {
    fn request(&self, messages: &[Message], opts: &RequestOptions) -> (String, Value) {
        let mut options = json!({
            "num_ctx": opts.num_ctx,
            "temperature": opts.temperature,
            "top_p": opts.top_p,
            "num_predict": opts.num_predict,
        });
        if let Some(seed) = opts.seed {
            options["seed"] = json!(seed);
        }
        let keep_alive = LlmConfig::keep_alive_json(&opts.keep_alive);
        match self.endpoint {
            OllamaEndpoint::Chat => (
                format!("{}/api/chat", self.base),
                json!({
                    "model": self.model,
                    "messages": messages,
                    "stream": false,
                    "keep_alive": keep_alive,
                    "options": options,
                }),
            ),
            OllamaEndpoint::Generate => {
                // /api/generate has one system text and one prompt: the example exchange, if
                // any, is folded into the system text.
                let mut system = String::new();
                let mut prompt = String::new();
                for (i, m) in messages.iter().enumerate() {
                    match m.role {
                        "system" => system.push_str(&m.content),
                        _ if i + 1 == messages.len() => prompt = m.content.clone(),
                        "user" => {
                            system.push_str("\n\nExample transcript: ");
                            system.push_str(&m.content);
                        }
                        _ => {
                            system.push_str("\nCleaned: ");
                            system.push_str(&m.content);
                        }
                    }
                }
                (
                    format!("{}/api/generate", self.base),
                    json!({
                        "model": self.model,
                        "system": system,
                        "prompt": prompt,
                        "stream": false,
                        "keep_alive": keep_alive,
                        "options": options,
                    }),
                )
            }
        }
    }

    async fn complete(
        &self,
        messages: &[Message],
        opts: &RequestOptions,
    ) -> Result<Completion, LlmError> {
        let (url, body) = self.request(messages, opts);
        let v = post_json(&self.client, &url, &body).await?;
        let text = match self.endpoint {
            OllamaEndpoint::Chat => v["message"]["content"].as_str(),
            OllamaEndpoint::Generate => v["response"].as_str(),
        }
        .ok_or_else(|| {
            LlmError::Malformed(format!("{url}: answer has no text: {}", json_snippet(&v)))
        })?;
        let eval_ms = ns_to_ms(&v["eval_duration"]);
        let eval_count = v["eval_count"].as_u64();
        let tokens_per_sec = match (eval_count, eval_ms) {
            (Some(n), Some(ms)) if ms > 0.0 => Some(n as f64 / (ms / 1000.0)),
            _ => None,
        };
        Ok(Completion {
            text: text.to_string(),
            load_ms: ns_to_ms(&v["load_duration"]),
            prompt_eval_ms: ns_to_ms(&v["prompt_eval_duration"]),
            eval_ms,
            eval_count,
            tokens_per_sec,
            server_total_ms: ns_to_ms(&v["total_duration"]),
        })
    }

    async fn residency(&self) -> Result<Option<Residency>, LlmError> {
        let url = format!("{}/api/ps", self.base);
        let (status, text) = get_capped(&self.client, &url).await?;
        if !status.is_success() {
            return Err(http_error(&url, status, &text));
        }
        let v: Value =
            serde_json::from_str(&text).map_err(|e| LlmError::Malformed(format!("{url}: {e}")))?;
        let models = v["models"].as_array().ok_or_else(|| {
            LlmError::Malformed(format!("{url}: no `models` list in {}", json_snippet(&v)))
        })?;
        Ok(models
            .iter()
            .find(|m| {
                m["name"]
                    .as_str()
                    .is_some_and(|n| same_model(n, &self.model))
                    || m["model"]
                        .as_str()
                        .is_some_and(|n| same_model(n, &self.model))
            })
            .map(|m| Residency {
                model: m["name"].as_str().unwrap_or_default().to_string(),
                size: m["size"].as_u64(),
                size_vram: m["size_vram"].as_u64(),
                context_length: m["context_length"].as_u64(),
                expires_at: m["expires_at"].as_str().map(str::to_string),
            }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_with_implicit_latest() {
        assert!(same_model("llama3.2", "llama3.2:latest"));
        assert!(same_model("smollm2:135m", "smollm2:135m"));
        assert!(!same_model("smollm2:135m", "smollm2:360m"));
    }

    #[test]
    fn chat_and_generate_bodies_carry_the_config_options() {
        let config = LlmConfig::default();
        let msgs = super::super::prompt::messages(&config, &[], "hello");
        let opts = config.request_options("hello");
        let o = Ollama::new(reqwest::Client::new(), &config);
        let (url, body) = o.request(&msgs, &opts);
        assert!(url.ends_with("/api/chat"));
        assert_eq!(body["options"]["num_ctx"], json!(2048));
        assert_eq!(body["keep_alive"], json!("30m"));
        assert_eq!(body["stream"], json!(false));
        assert_eq!(body["messages"].as_array().map(Vec::len), Some(4));
        let g = Ollama::new(
            reqwest::Client::new(),
            &LlmConfig {
                ollama_endpoint: OllamaEndpoint::Generate,
                ..config.clone()
            },
        );
        let (url, body) = g.request(&msgs, &opts);
        assert!(url.ends_with("/api/generate"));
        assert_eq!(body["prompt"], json!("hello"));
        assert!(body["system"]
            .as_str()
            .is_some_and(|s| s.contains("Example transcript")));
        assert_eq!(body["options"], o.request(&msgs, &opts).1["options"]);
    }
}

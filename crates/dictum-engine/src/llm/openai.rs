//! OpenAI-compatible `/v1/chat/completions` (llama-server, LM Studio, vLLM, Ollama's `/v1`).
//! No residency API; speed comes from llama-server's `timings` when present, else from
//! `usage.completion_tokens` over the request's wall time.

use super::config::{LlmConfig, RequestOptions};
use super::prompt::Message;
use super::{json_snippet, post_json, Backend, Completion, LlmError, Residency};
use serde_json::{json, Value};
use std::time::Instant;

pub struct OpenAi {
    client: reqwest::Client,
    url: String,
    model: String,
}

impl OpenAi {
    pub fn new(client: reqwest::Client, config: &LlmConfig) -> OpenAi {
        let base = config.url.trim_end_matches('/');
        let url = if base.ends_with("/chat/completions") {
            base.to_string()
        } else if base.ends_with("/v1") {
            format!("{base}/chat/completions")
        } else {
            format!("{base}/v1/chat/completions")
        };
        OpenAi {
            client,
            url,
            model: config.model.clone(),
        }
    }
}

impl Backend for OpenAi {
    fn request(&self, messages: &[Message], opts: &RequestOptions) -> (String, Value) {
        let mut body = json!({
            "model": self.model,
            "messages": messages,
            "stream": false,
            "temperature": opts.temperature,
            "top_p": opts.top_p,
            "max_tokens": opts.num_predict,
        });
        if let Some(seed) = opts.seed {
            body["seed"] = json!(seed);
        }
        (self.url.clone(), body)
    }

    async fn complete(
        &self,
        messages: &[Message],
        opts: &RequestOptions,
    ) -> Result<Completion, LlmError> {
        let (url, body) = self.request(messages, opts);
        let start = Instant::now();
        let v = post_json(&self.client, &url, &body).await?;
        let wall_s = start.elapsed().as_secs_f64();
        let text = v["choices"][0]["message"]["content"]
            .as_str()
            .ok_or_else(|| {
                LlmError::Malformed(format!(
                    "{url}: answer has no choices[0].message.content: {}",
                    json_snippet(&v)
                ))
            })?;
        let t = &v["timings"];
        let eval_count = t["predicted_n"]
            .as_u64()
            .or_else(|| v["usage"]["completion_tokens"].as_u64());
        let tokens_per_sec = t["predicted_per_second"].as_f64().or_else(|| {
            eval_count
                .filter(|_| wall_s > 0.0)
                .map(|n| n as f64 / wall_s)
        });
        let prompt_eval_ms = t["prompt_ms"].as_f64();
        let eval_ms = t["predicted_ms"].as_f64();
        Ok(Completion {
            text: text.to_string(),
            load_ms: None,
            prompt_eval_ms,
            eval_ms,
            eval_count,
            tokens_per_sec,
            server_total_ms: prompt_eval_ms.zip(eval_ms).map(|(a, b)| a + b),
        })
    }

    async fn residency(&self) -> Result<Option<Residency>, LlmError> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_forms() {
        let mk = |url: &str| {
            OpenAi::new(
                reqwest::Client::new(),
                &LlmConfig {
                    url: url.into(),
                    ..LlmConfig::default()
                },
            )
            .url
        };
        assert_eq!(mk("http://h:8080"), "http://h:8080/v1/chat/completions");
        assert_eq!(
            mk("http://h:11434/v1/"),
            "http://h:11434/v1/chat/completions"
        );
        assert_eq!(
            mk("http://h/x/v1/chat/completions"),
            "http://h/x/v1/chat/completions"
        );
    }
}

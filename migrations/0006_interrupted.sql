-- Hardening (issue 12): a row left `pending` by a process that crashed or was killed is marked
-- 'interrupted' by the next long-running Dictum (its audio kept when it exists), so the history
-- tells a dictation cut short apart from one still under way. SQLite cannot change a CHECK in
-- place: the table is rebuilt with the same columns, rowids (the FTS index's keys) kept, and
-- its indexes and FTS triggers recreated.
DROP TRIGGER IF EXISTS dictations_fts_insert;
DROP TRIGGER IF EXISTS dictations_fts_delete;
DROP TRIGGER IF EXISTS dictations_fts_update;

CREATE TABLE dictations_new (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at_ms      INTEGER NOT NULL,
    source             TEXT    NOT NULL CHECK (source IN ('file', 'mic')),
    source_path        TEXT,
    outcome            TEXT    NOT NULL
        CHECK (outcome IN ('pending', 'ok', 'no_speech', 'error', 'interrupted')),
    error_kind         TEXT,
    error              TEXT,
    raw_text           TEXT,
    text               TEXT,
    language           TEXT,
    model              TEXT,
    device             TEXT,
    app_class          TEXT,
    window_title       TEXT,
    audio_ms           INTEGER,
    speech_ms          INTEGER,
    audio_path         TEXT,
    decode_ms          REAL,
    resample_ms        REAL,
    vad_ms             REAL,
    model_load_ms      REAL,
    warmup_ms          REAL,
    stt_ms             REAL,
    llm_ms             REAL,
    inject_ms          REAL,
    total_ms           REAL,
    llm_tokens_per_sec REAL,
    llm_load_ms        REAL,
    llm_reloaded       INTEGER,
    llm_backend        TEXT,
    llm_model          TEXT,
    llm_outcome        TEXT
        CHECK (llm_outcome IS NULL OR llm_outcome IN ('cleaned', 'rejected', 'failed', 'disabled')),
    llm_reject_reason  TEXT,
    llm_error          TEXT,
    llm_prompt_eval_ms REAL,
    llm_eval_ms        REAL,
    press_to_capture_ms REAL,
    preroll_ms         INTEGER,
    post_roll_ms       INTEGER,
    release_to_text_ms REAL,
    release_to_typed_ms REAL,
    tail_stt_ms        REAL,
    chunks             INTEGER,
    inject_method      TEXT,
    inject_error       TEXT
);

INSERT INTO dictations_new (
    id, created_at_ms, source, source_path, outcome, error_kind, error, raw_text, text, language,
    model, device, app_class, window_title, audio_ms, speech_ms, audio_path, decode_ms,
    resample_ms, vad_ms, model_load_ms, warmup_ms, stt_ms, llm_ms, inject_ms, total_ms,
    llm_tokens_per_sec, llm_load_ms, llm_reloaded, llm_backend, llm_model, llm_outcome,
    llm_reject_reason, llm_error, llm_prompt_eval_ms, llm_eval_ms, press_to_capture_ms,
    preroll_ms, post_roll_ms, release_to_text_ms, release_to_typed_ms, tail_stt_ms, chunks,
    inject_method, inject_error)
SELECT
    id, created_at_ms, source, source_path, outcome, error_kind, error, raw_text, text, language,
    model, device, app_class, window_title, audio_ms, speech_ms, audio_path, decode_ms,
    resample_ms, vad_ms, model_load_ms, warmup_ms, stt_ms, llm_ms, inject_ms, total_ms,
    llm_tokens_per_sec, llm_load_ms, llm_reloaded, llm_backend, llm_model, llm_outcome,
    llm_reject_reason, llm_error, llm_prompt_eval_ms, llm_eval_ms, press_to_capture_ms,
    preroll_ms, post_roll_ms, release_to_text_ms, release_to_typed_ms, tail_stt_ms, chunks,
    inject_method, inject_error
FROM dictations;

DROP TABLE dictations;
ALTER TABLE dictations_new RENAME TO dictations;

CREATE INDEX dictations_created ON dictations (created_at_ms);
CREATE INDEX dictations_app_created ON dictations (app_class, created_at_ms);
CREATE INDEX dictations_outcome_created ON dictations (outcome, created_at_ms);
CREATE INDEX dictations_llm_outcome_created ON dictations (llm_outcome, created_at_ms);

CREATE TRIGGER dictations_fts_insert AFTER INSERT ON dictations BEGIN
    INSERT INTO dictations_fts (rowid, raw_text, text) VALUES (new.id, new.raw_text, new.text);
END;

CREATE TRIGGER dictations_fts_delete AFTER DELETE ON dictations BEGIN
    INSERT INTO dictations_fts (dictations_fts, rowid, raw_text, text)
    VALUES ('delete', old.id, old.raw_text, old.text);
END;

CREATE TRIGGER dictations_fts_update AFTER UPDATE OF raw_text, text ON dictations BEGIN
    INSERT INTO dictations_fts (dictations_fts, rowid, raw_text, text)
    VALUES ('delete', old.id, old.raw_text, old.text);
    INSERT INTO dictations_fts (rowid, raw_text, text) VALUES (new.id, new.raw_text, new.text);
END;

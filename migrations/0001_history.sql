-- Every dictation or file transcription, stored before anything after capture can fail
-- (outcome 'pending'), then completed with text, outcome and per-stage timings.
CREATE TABLE dictations (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at_ms      INTEGER NOT NULL,              -- unix epoch milliseconds, UTC
    source             TEXT    NOT NULL CHECK (source IN ('file', 'mic')),
    source_path        TEXT,                          -- input file, for source = 'file'
    outcome            TEXT    NOT NULL CHECK (outcome IN ('pending', 'ok', 'no_speech', 'error')),
    error_kind         TEXT,                          -- machine-readable, e.g. 'model_corrupt'
    error              TEXT,                          -- the message the user saw
    raw_text           TEXT,                          -- whisper's words (annotations removed)
    text               TEXT,                          -- what was (or would be) typed
    language           TEXT,
    model              TEXT,
    device             TEXT,                          -- 'cpu', 'cuda'
    app_class          TEXT,                          -- focused window class (null for files)
    window_title       TEXT,                          -- focused window title (null for files)
    audio_ms           INTEGER,                       -- length of the captured audio
    speech_ms          INTEGER,                       -- speech found by the VAD
    audio_path         TEXT,                          -- kept WAV, only if history.keep_audio
    -- stage timings, milliseconds (null: the stage did not run)
    decode_ms          REAL,
    resample_ms        REAL,
    vad_ms             REAL,
    model_load_ms      REAL,
    warmup_ms          REAL,
    stt_ms             REAL,
    llm_ms             REAL,
    inject_ms          REAL,
    total_ms           REAL,
    -- LLM cleanup (null until that stage runs)
    llm_tokens_per_sec REAL,
    llm_load_ms        REAL,
    llm_reloaded       INTEGER
);

CREATE INDEX dictations_created_at ON dictations (created_at_ms DESC);
CREATE INDEX dictations_outcome ON dictations (outcome);

-- Shared speech servers (issue 15): where each dictation was transcribed, and why the local
-- model took over when the server failed. Null for rows from before this version.
ALTER TABLE dictations ADD COLUMN stt_backend TEXT;      -- 'local' or 'openai' (the server answered)
ALTER TABLE dictations ADD COLUMN stt_fallback TEXT;     -- why the server's part was done locally
ALTER TABLE dictations ADD COLUMN stt_upload_ms REAL;    -- round trip minus the server's own time
ALTER TABLE dictations ADD COLUMN stt_server_ms REAL;    -- the server's processing time, when reported

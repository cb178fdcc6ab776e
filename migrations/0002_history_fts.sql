-- Full-text search over what was said (raw) and what was typed (final), kept in step with
-- the table by triggers. Rows that existed before this migration are indexed by 'rebuild'.
CREATE VIRTUAL TABLE dictations_fts USING fts5 (
    raw_text,
    text,
    content = 'dictations',
    content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);

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

INSERT INTO dictations_fts (dictations_fts) VALUES ('rebuild');

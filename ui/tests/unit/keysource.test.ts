import { describe, expect, it } from 'vitest';
import { withoutKeySource } from '../../src/ipc';

describe('probe arguments', () => {
  it('never carry a key source (the app takes it from the saved settings)', () => {
    const form = { url: 'https://typed.example', model: 'm', api_key_env: 'HOME', timeout_ms: 5000 };
    const sent = withoutKeySource(form);
    expect(sent).toEqual({ url: 'https://typed.example', model: 'm', timeout_ms: 5000 });
    expect('api_key_env' in sent).toBe(false);
    expect(form.api_key_env).toBe('HOME'); // the form itself is untouched
  });
});

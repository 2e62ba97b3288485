import { describe, expect, it } from 'vitest';
import { ApiError } from '../../lib/api';
import { maskApiKey } from './api-key-mask';
import { canSubmitPasswordChange, passwordChangeErrorKey, passwordChangeProblem } from './password-change-rules';

describe('API key mask', () => {
  it('shows the first 8 and last 4 characters with dots between', () => {
    expect(maskApiKey('tp_0123456789abcdefghijklmnopqrstuv')).toBe('tp_01234••••••••stuv');
  });

  it('hides a key too short to mask whole', () => {
    expect(maskApiKey('abcdefghijkl')).toBe('••••••••••••');
    expect(maskApiKey('abcdefghijklm')).toBe('abcdefgh••••••••jklm');
    expect(maskApiKey('')).toBe('');
  });
});

describe('password change rules', () => {
  it.each([
    [{ current: '', next: '', confirm: '' }, false],
    [{ current: 'old', next: 'new-password', confirm: '' }, false],
    [{ current: '', next: 'new-password', confirm: 'new-password' }, false],
    [{ current: 'old', next: '', confirm: 'x' }, false],
    [{ current: 'old', next: 'new-password', confirm: 'new-password' }, true],
  ])('%j can be submitted: %s', (fields, expected) => {
    expect(canSubmitPasswordChange(fields)).toBe(expected);
  });

  it('new and confirm must match, then be long enough', () => {
    expect(passwordChangeProblem({ current: 'old', next: 'new-password', confirm: 'new-passwort' })).toBe('passwordMismatch');
    expect(passwordChangeProblem({ current: 'old', next: 'short', confirm: 'short' })).toBe('passwordTooShort');
    expect(passwordChangeProblem({ current: 'old', next: '12345678', confirm: '12345678' })).toBeNull();
  });

  it('maps the server codes to their own messages, nothing else', () => {
    expect(passwordChangeErrorKey(new ApiError(400, 'other', 'x', 'current_password_incorrect'))).toBe(
      'password.errors.currentPasswordIncorrect',
    );
    expect(passwordChangeErrorKey(new ApiError(400, 'other', 'x', 'oauth_user_cannot_change_password'))).toBe(
      'password.errors.oauthCannotChange',
    );
    expect(passwordChangeErrorKey(new ApiError(400, 'other', 'x', 'validation_error'))).toBeNull();
    expect(passwordChangeErrorKey(new Error('x'))).toBeNull();
  });
});

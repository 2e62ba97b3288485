/**
 * Limits the server enforces and the console checks too, to answer before a round trip. Free of zod so
 * the console can import them without loading it.
 */

/** Ids are 32-bit integer columns; a larger number is refused as invalid rather than failing in SQL. */
export const MAX_ID = 2_147_483_647;

export const MAX_USERNAME_LENGTH = 32;
export const MAX_DISPLAY_NAME_LENGTH = 64;
export const MAX_EMAIL_LENGTH = 254;
export const MIN_PASSWORD_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 128;
/** Users per page of `GET /user/?p=`; a shorter page is the last one. */
export const USERS_PAGE_SIZE = 10;
export const MAX_USER_SEARCH_LENGTH = 100;
export const USER_SEARCH_LIMIT = 100;

export const LOGS_PAGE_SIZE = 20;
export const LOGS_MAX_PAGE_SIZE = 100;
export const MAX_PAGE = 1_000_000;
export const MAX_SERVICE_NAME_FILTER_LENGTH = 64;

export const AUDIT_PAGE_SIZE = 20;
export const AUDIT_MAX_PAGE_SIZE = 100;
/** Longest `actor` or `object_id` filter of `GET /audit`. */
export const MAX_AUDIT_FILTER_LENGTH = 256;

export const MAX_OAUTH_CLIENT_ID_LENGTH = 256;
export const MAX_OAUTH_CLIENT_SECRET_LENGTH = 512;

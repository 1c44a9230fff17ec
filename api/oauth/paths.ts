// Where the OAuth endpoints are, for the routes, the metadata and the OpenAPI document alike.
export const OAUTH_PATHS = { register: '/oauth/register', token: '/oauth/token', revoke: '/oauth/revoke' } as const;

/** The authorization endpoint is a console page (api/console/pages/oauth.ts). */
export const AUTHORIZE_PATH = '/console/oauth/authorize';

// Types of scopes.js, which the gateway generates from its scope list (console-routes.ts): no file holds it.

/** Every scope an API key may hold, as the gateway knows them. */
export declare const SCOPES: readonly string[];

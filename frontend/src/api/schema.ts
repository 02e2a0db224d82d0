// Generated from the server's OpenAPI spec by scripts/gen-api.mjs (openapi-typescript): do not edit.
// Regenerate after changing the API: make api-types (docs/ui.md). tests/api/test_openapi_types.py checks it.
export interface paths {
    "/api/v1/cluster/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List, newest first; filter with ?field=value, page with ?page=&page_size= */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PageMeta"] & {
                            items: components["schemas"]["ClusterOut"][];
                        };
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        /** Create */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["Cluster"];
                };
            };
            responses: {
                /** @description OK */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ClusterOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/cluster/{pk}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get one by id */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ClusterOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        /** Update the fields given */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["Cluster"];
                };
            };
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ClusterOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        post?: never;
        /** Delete */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Message"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                503: components["responses"]["Busy"];
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/edge/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List, newest first; filter with ?field=value, page with ?page=&page_size= */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PageMeta"] & {
                            items: components["schemas"]["EdgeOut"][];
                        };
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        /** Create */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["Edge"];
                };
            };
            responses: {
                /** @description OK */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["EdgeOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/edge/{pk}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get one by id */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["EdgeOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        /** Update the fields given */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["Edge"];
                };
            };
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["EdgeOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        post?: never;
        /** Delete */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Message"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                503: components["responses"]["Busy"];
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/experiment/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List, newest first; filter with ?field=value, page with ?page=&page_size= */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PageMeta"] & {
                            items: components["schemas"]["ExperimentOut"][];
                        };
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        /** Create */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["Experiment"];
                };
            };
            responses: {
                /** @description OK */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ExperimentOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/experiment/import": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create an experiment from YAML, or replace the settings of one not started yet */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["ExperimentYaml"];
                };
            };
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ExperimentOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/experiment/{pk}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get one by id */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ExperimentOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        post?: never;
        /** Delete */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Message"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                503: components["responses"]["Busy"];
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/experiment/{pk}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Cancel the experiment: it ends and every running trial's run is cancelled */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                202: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Message"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/experiment/{pk}/importances": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Each searched parameter's importance to the first objective (Optuna's fANOVA over the complete trials), or why there is none yet */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ParamImportances"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/experiment/{pk}/start": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Start an experiment not started yet (one running already is left as it is) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ExperimentOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/image/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List, newest first; filter with ?field=value, page with ?page=&page_size= */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PageMeta"] & {
                            items: components["schemas"]["ImageOut"][];
                        };
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        /** Create */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["Image"];
                };
            };
            responses: {
                /** @description OK */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ImageOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/image/{pk}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get one by id */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ImageOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        /** Update the fields given */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["Image"];
                };
            };
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ImageOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        post?: never;
        /** Delete */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Message"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                503: components["responses"]["Busy"];
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/image_build/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List, newest first; filter with ?field=value, page with ?page=&page_size= */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PageMeta"] & {
                            items: components["schemas"]["ImageBuildOut"][];
                        };
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        /** Ask for a build: stored pending, built by a worker */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["ImageBuild"];
                };
            };
            responses: {
                /** @description OK */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ImageBuildOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/image_build/project/{pk}/registry_credentials": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Whether the project (pk) has push credentials, and for which registry */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["RegistryCredentialsState"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        /** Set the project's (pk) push credentials for Kaniko builds (owners); stored sealed */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["RegistryCredentials"];
                };
            };
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["RegistryCredentialsState"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        post?: never;
        /** Forget the project's (pk) push credentials (owners) */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["RegistryCredentialsState"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                503: components["responses"]["Busy"];
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/image_build/{pk}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get one by id */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ImageBuildOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        post?: never;
        /** Delete */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Message"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                503: components["responses"]["Busy"];
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/image_build/{pk}/log": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The build's log (kept after it ended); ?after=N: the lines after line N */
        get: {
            parameters: {
                query?: {
                    /** @description line number already seen (0: from the start) */
                    after?: string;
                    /** @description at most this many lines (default 5000, at most 20000) */
                    limit?: string;
                };
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["BuildLog"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/image_build/{pk}/log_stream": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Server-sent events: `lines` as the build writes them, `end` when done */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/event-stream": components["schemas"]["BuildLog"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                429: components["responses"]["TooManyStreams"];
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/image_build/{pk}/usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Which notebooks, job templates and pipeline tasks use the built image */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ImageUsage"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/inference_service/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List, newest first; filter with ?field=value, page with ?page=&page_size= */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PageMeta"] & {
                            items: components["schemas"]["InferenceServiceOut"][];
                        };
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        /** Create */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["InferenceService"];
                };
            };
            responses: {
                /** @description OK */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["InferenceServiceOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/inference_service/{pk}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get one by id */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["InferenceServiceOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        /** Update the fields given */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["InferenceService"];
                };
            };
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["InferenceServiceOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        post?: never;
        /** Delete: the worker stops every server of the service, then removes it */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Message"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                503: components["responses"]["Busy"];
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/inference_service/{pk}/canary": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Roll a version out as a canary: weight % of the traffic, the rest to the stable version */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["Canary"];
                };
            };
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["InferenceServiceOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/inference_service/{pk}/logs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Sampled request logs (every error, one in ten of the rest), newest first */
        get: {
            parameters: {
                query?: {
                    /** @description text the entry contains */
                    q?: string;
                    /** @description at most this many (1..500, default 100) */
                    limit?: string;
                };
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ServiceLogs"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/inference_service/{pk}/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Requests/s, latency p50/p95/p99 and errors per version, per second */
        get: {
            parameters: {
                query?: {
                    /** @description seconds back, 10..900 (default 300) */
                    window?: string;
                };
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ServiceMetrics"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/inference_service/{pk}/promote": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Make the canary the stable version with all the traffic */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["Promote"];
                };
            };
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["InferenceServiceOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/inference_service/{pk}/rollback": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Send all the traffic back to the stable version (the canary's server stops) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["Empty"];
                };
            };
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["InferenceServiceOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/job_template/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List, newest first; filter with ?field=value, page with ?page=&page_size= */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PageMeta"] & {
                            items: components["schemas"]["JobTemplateOut"][];
                        };
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        /** Create */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["JobTemplate"];
                };
            };
            responses: {
                /** @description OK */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["JobTemplateOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/job_template/{pk}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get one by id */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["JobTemplateOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        /** Update the fields given */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["JobTemplate"];
                };
            };
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["JobTemplateOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        post?: never;
        /** Delete */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Message"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                503: components["responses"]["Busy"];
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/limits/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The platform's limits (value, config default) and each project's limit of running runs */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["LimitsOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        /** Set platform limits; null goes back to the config default */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["PlatformLimits"];
                };
            };
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["LimitsOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/limits/project/{pk}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** Set a project's limit of runs running at once (null: none); runs beyond it wait queued */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["ProjectLimit"];
                };
            };
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ProjectLimitOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/me/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The signed-in user, their projects and roles, and a CSRF token */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Me"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/menu/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Get the menu data structure. Returns a forest like structure with the menu the user has access to */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Get menu data */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Menu items in a forest like data structure */
                            result?: {
                                childs?: Record<string, never>[];
                                /** @description Icon name to show for this menu item */
                                icon?: string;
                                /** @description Pretty name for the menu item */
                                label?: string;
                                /** @description The internal menu item name, maps to permission_name */
                                name?: string;
                                /** @description The URL for the menu item */
                                url?: string;
                            }[];
                        };
                    };
                };
                401: components["responses"]["401"];
                403: components["responses"]["403"];
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/model_version/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List, newest first; filter with ?field=value, page with ?page=&page_size= */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PageMeta"] & {
                            items: components["schemas"]["ModelVersionOut"][];
                        };
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        /** Create */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["ModelVersion"];
                };
            };
            responses: {
                /** @description OK */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ModelVersionOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/model_version/upload": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Upload a model file (multipart/form-data): stored in the project's model store, registered as the next version of the model */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "multipart/form-data": components["schemas"]["ModelUpload"];
                };
            };
            responses: {
                /** @description OK */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ModelVersionOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/model_version/{pk}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get one by id */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ModelVersionOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        /** Update the fields given */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["ModelVersion"];
                };
            };
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ModelVersionOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        post?: never;
        /** Delete */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Message"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                503: components["responses"]["Busy"];
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/model_version/{pk}/metric_history": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Each metric's values per step, as the run that registered the version reported them */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["MetricHistory"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/notebook/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List, newest first; filter with ?field=value, page with ?page=&page_size= */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PageMeta"] & {
                            items: components["schemas"]["NotebookOut"][];
                        };
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        /** Create */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["Notebook"];
                };
            };
            responses: {
                /** @description OK */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["NotebookOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/notebook/project/{pk}/images": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** What a notebook of the project (pk) may run, in the order to offer it: the platform's default images, the project's own, the shared catalog; only_defaults: nothing else exists yet */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["NotebookImageChoices"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/notebook/{pk}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get one by id */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["NotebookOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        /** Update the fields given */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["Notebook"];
                };
            };
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["NotebookOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        post?: never;
        /** Delete a notebook: a worker stops it, removes its work folder, then its row */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            message: string;
                        };
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                503: components["responses"]["Busy"];
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/notebook/{pk}/log": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** JupyterLab's log: live while it runs, its last attempt's once stopped */
        get: {
            parameters: {
                query?: {
                    /** @description the last N lines (default 1000, at most 10000) */
                    limit?: string;
                };
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["TaskLogs"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/notebook/{pk}/start": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Start a stopped or failed notebook (a stopping one starts again once stopped; a running one is left as it is) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["NotebookOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/notebook/{pk}/stop": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Stop a notebook (its work folder is kept) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["NotebookOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/pipeline/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List, newest first; filter with ?field=value, page with ?page=&page_size= */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PageMeta"] & {
                            items: components["schemas"]["PipelineOut"][];
                        };
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        /** Create */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["Pipeline"];
                };
            };
            responses: {
                /** @description OK */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PipelineOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/pipeline/import": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create or update a pipeline from YAML (tasks, depends_on, schedule) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["PipelineYaml"];
                };
            };
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PipelineOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/pipeline/{pk}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get one by id */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PipelineOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        /** Update the fields given */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["Pipeline"];
                };
            };
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PipelineOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        post?: never;
        /** Delete */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Message"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                503: components["responses"]["Busy"];
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/pipeline/{pk}/backfill": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** One run per date from start to end, each with its ds; max_active_runs limits concurrency */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["Backfill"];
                };
            };
            responses: {
                /** @description OK */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["RunIds"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/pipeline/{pk}/clone": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Copy the pipeline (settings, tasks, edges) under a new name in the same project; the copy is paused unless the body says "paused": false */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["Clone"];
                };
            };
            responses: {
                /** @description OK */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PipelineOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/pipeline/{pk}/export": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The pipeline as YAML, ready for `myapp pipeline apply` */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PipelineExport"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/pipeline/{pk}/graph": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The pipeline with all its tasks and edges, for the editor */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PipelineGraph"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        /** Replace the whole DAG in one transaction: tasks by id (existing) or key (new), edges by key */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["Graph"];
                };
            };
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PipelineGraph"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/pipeline/{pk}/webhook_secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** The webhook's signing secret (HMAC-SHA256 key of X-Myapp-Signature), for developers */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["WebhookSecret"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/pipeline/{pk}/webhook_secret/rotate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Replace the webhook's signing secret with a new one; deliveries from now on use it */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["WebhookSecret"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/pipeline_run/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List, newest first; filter with ?field=value, page with ?page=&page_size= */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PageMeta"] & {
                            items: components["schemas"]["PipelineRunOut"][];
                        };
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        /** Create */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["PipelineRun"];
                };
            };
            responses: {
                /** @description OK */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PipelineRunOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/pipeline_run/{pk}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get one by id */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PipelineRunOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        post?: never;
        /** Delete */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Message"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                503: components["responses"]["Busy"];
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/pipeline_run/{pk}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Cancel the run: its running jobs are stopped in the backend */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                202: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Message"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/pipeline_run/{pk}/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Server-sent events: `run` (the run and its task runs) on every change, `end` once it has finished */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/event-stream": components["schemas"]["RunSnapshot"] | components["schemas"]["StreamEnd"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                429: components["responses"]["TooManyStreams"];
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/pipeline_run/{pk}/rerun": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** A new run that keeps this run's succeeded tasks and runs the failed ones and what follows */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PipelineRunOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/project/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List, newest first; filter with ?field=value, page with ?page=&page_size= */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PageMeta"] & {
                            items: components["schemas"]["ProjectOut"][];
                        };
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        /** Create */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["Project"];
                };
            };
            responses: {
                /** @description OK */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ProjectOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/project/{pk}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get one by id */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ProjectOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        /** Update the fields given */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["Project"];
                };
            };
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ProjectOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        post?: never;
        /** Delete */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Message"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                503: components["responses"]["Busy"];
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/project/{pk}/members": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the project's members and their roles */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["MemberList"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        /** Add a member (owners only) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["Member"];
                };
            };
            responses: {
                /** @description OK */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["MemberOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/project/{pk}/members/{member_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** Change a member's role (owners only) */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                    member_id: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["MemberRole"];
                };
            };
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["MemberOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        post?: never;
        /** Remove a member (owners only) */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                    member_id: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Message"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                503: components["responses"]["Busy"];
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/project/{pk}/running": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** What the project runs now (runs, notebooks, model servers, image builds): what deleting it stops */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["RunningWork"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/quota/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List, newest first; filter with ?field=value, page with ?page=&page_size= */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PageMeta"] & {
                            items: components["schemas"]["QuotaOut"][];
                        };
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        /** Create */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["Quota"];
                };
            };
            responses: {
                /** @description OK */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["QuotaOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/quota/usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Capacity against use: per resource group and project, what running attempts request (cpu millicores, memory bytes, gpus) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["UsageReport"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/quota/{pk}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get one by id */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["QuotaOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        /** Update the fields given */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["Quota"];
                };
            };
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["QuotaOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        post?: never;
        /** Delete */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Message"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                503: components["responses"]["Busy"];
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/resource_group/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List, newest first; filter with ?field=value, page with ?page=&page_size= */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PageMeta"] & {
                            items: components["schemas"]["ResourceGroupOut"][];
                        };
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        /** Create */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["ResourceGroup"];
                };
            };
            responses: {
                /** @description OK */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ResourceGroupOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/resource_group/{pk}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get one by id */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ResourceGroupOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        /** Update the fields given */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["ResourceGroup"];
                };
            };
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ResourceGroupOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        post?: never;
        /** Delete */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Message"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                503: components["responses"]["Busy"];
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/resource_group/{pk}/status": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Capacity, use, each project's quota, use and borrowing, the running attempts and the queue with reasons and positions */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ResourceGroupStatus"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/scheduler/simulate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Replay a bundled trace through one or more policies: figures and time series per policy (stores nothing) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["Simulate"];
                };
            };
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Simulation"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/scheduler/traces": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The traces and policies the simulator offers */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["SimulatorTraces"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/security/login": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Authenticate and get a JWT access and refresh token */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /**
                         * @description The password for authentication
                         * @example complex-password
                         */
                        password?: string;
                        /**
                         * @description Choose an authentication provider
                         * @example db
                         * @enum {string}
                         */
                        provider?: "db" | "ldap";
                        /**
                         * @description If true a refresh token is provided also
                         * @example true
                         */
                        refresh?: boolean;
                        /**
                         * @description The username for authentication
                         * @example admin
                         */
                        username?: string;
                    };
                };
            };
            responses: {
                /** @description Authentication Successful */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            access_token?: string;
                            refresh_token?: string;
                        };
                    };
                };
                400: components["responses"]["400"];
                401: components["responses"]["401"];
                /** @description Too many sign-in attempts from this address, or for this account from it (Retry-After) */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            message: string;
                            retry_after: number;
                        };
                    };
                };
                500: components["responses"]["500"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/security/refresh": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Use the refresh token to get a new JWT access token */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Refresh Successful */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description A new refreshed access token */
                            access_token?: string;
                        };
                    };
                };
                401: components["responses"]["401"];
                500: components["responses"]["500"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/task/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List, newest first; filter with ?field=value, page with ?page=&page_size= */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PageMeta"] & {
                            items: components["schemas"]["TaskOut"][];
                        };
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        /** Create */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["Task"];
                };
            };
            responses: {
                /** @description OK */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["TaskOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/task/{pk}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get one by id */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["TaskOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        /** Update the fields given */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["Task"];
                };
            };
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["TaskOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        post?: never;
        /** Delete */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Message"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                503: components["responses"]["Busy"];
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/task/{pk}/manifests": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Preview the manifests this task would submit, validated */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["TaskManifests"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/task/{pk}/run": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Run this task alone (debug): a run of one task, its upstream ignored */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["RunId"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/task_run/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List, newest first; filter with ?field=value, page with ?page=&page_size= */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PageMeta"] & {
                            items: components["schemas"]["TaskRunOut"][];
                        };
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/task_run/{pk}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get one by id */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["TaskRunOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/task_run/{pk}/log_download": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The whole log as text, one line per log line (`<ISO time> [replica] text`), streamed as it is read */
        get: {
            parameters: {
                query?: {
                    /** @description only this replica */
                    replica?: string;
                    /** @description only lines containing this text */
                    search?: string;
                };
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/plain": string;
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/task_run/{pk}/log_stream": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Server-sent events: `lines` as they are written, `end` when finished */
        get: {
            parameters: {
                query?: {
                    /** @description only this replica */
                    replica?: string;
                    /** @description only lines containing this text */
                    search?: string;
                };
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/event-stream": components["schemas"]["LogBatch"] | components["schemas"]["StreamProblem"] | components["schemas"]["StreamEnd"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                429: components["responses"]["TooManyStreams"];
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/task_run/{pk}/logs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Aggregated logs of every replica: live while running, archived after */
        get: {
            parameters: {
                query?: {
                    /** @description only this replica (e.g. worker-1) */
                    replica?: string;
                    /** @description only lines containing this text */
                    search?: string;
                    /** @description the last N lines (default 1000, at most 10000) */
                    limit?: string;
                };
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["TaskLogs"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/task_run/{pk}/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** CPU, memory and GPU samples: live while running, kept after */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["TaskMetrics"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/task_run/{pk}/output": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One output file: a download, or with preview=1 its start as text (images are shown as they are); without path, every file in one zip */
        get: {
            parameters: {
                query?: {
                    /** @description the file, relative to the output folder (none: all of them, zipped) */
                    path?: string;
                    /** @description 1: the first 64 KiB, as text */
                    preview?: string;
                };
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/octet-stream": string;
                        "application/zip": string;
                        "image/gif": string;
                        "image/jpeg": string;
                        "image/png": string;
                        "image/webp": string;
                        "text/plain": string;
                    };
                };
                /** @description A file left on a Kubernetes outputs claim (`on_claim`) is being fetched by the worker (for a preview, only its first 64 KiB): ask again after Retry-After seconds */
                202: {
                    headers: {
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Message"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                /** @description The file is larger than the platform fetches from a cluster */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description The last fetch from the cluster failed (the reason, answered once to GET; ask again to retry) */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/task_run/{pk}/outputs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** What the attempt wrote to MYAPP_OUTPUT_DIR (listed when it ended; live while it runs) and the metrics it reported in metrics.jsonl */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["TaskOutputs"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/task_run/{pk}/reported_metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Report metrics of a running attempt at a step (a task, with its run's token): kept with the attempt beside those of metrics.jsonl */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["ReportMetrics"];
                };
            };
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            kept: number;
                        };
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/trial/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List, newest first; filter with ?field=value, page with ?page=&page_size= */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PageMeta"] & {
                            items: components["schemas"]["TrialOut"][];
                        };
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/trial/{pk}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get one by id */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["TrialOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/user/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List, newest first; filter with ?field=value, page with ?page=&page_size= */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PageMeta"] & {
                            items: components["schemas"]["UserOut"][];
                        };
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        /** Create a user (admins); with generate_password the answer carries the password, once */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["UserCreate"];
                };
            };
            responses: {
                /** @description OK */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["NewUser"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/user/{pk}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get one by id */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["UserOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        /** Change a user's name, email, active flag or admin flag (admins; not your own active or admin flag) */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["UserUpdate"];
                };
            };
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["UserOut"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/user/{pk}/login_limits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A user's sign-in limits: addresses backing off, attempts left from new addresses, the addresses they signed in from (admins) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["LoginLimits"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
            };
        };
        put?: never;
        post?: never;
        /** Clear a user's sign-in limits: every address may try again now (admins); known addresses stay */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["LoginLimits"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                503: components["responses"]["Busy"];
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/user/{pk}/password": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Set a user's password (admins); with generate_password the answer carries it, once */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    pk: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["PasswordReset"];
                };
            };
            responses: {
                /** @description OK */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PasswordChanged"];
                    };
                };
                400: components["responses"]["InvalidInput"];
                401: components["responses"]["NotAuthenticated"];
                403: components["responses"]["NotAllowed"];
                404: components["responses"]["NotFoundHere"];
                409: components["responses"]["Conflict"];
                413: components["responses"]["TooLarge"];
                503: components["responses"]["Busy"];
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/{version}/_openapi": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Get the OpenAPI spec for a specific API version */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    version: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description The OpenAPI spec */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": Record<string, never>;
                    };
                };
                404: components["responses"]["404"];
                500: components["responses"]["500"];
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        Amount: {
            cpu_millicores: number;
            gpus: number;
            memory_bytes: number;
        };
        ArgItems: {
            enum?: unknown[];
            maxLength?: number;
            maximum?: number;
            minLength?: number;
            minimum?: number;
            pattern?: string;
            /** @enum {string} */
            type: "string" | "integer" | "number" | "boolean";
        };
        ArgProperty: {
            default?: unknown;
            description?: string;
            enum?: unknown[];
            items?: components["schemas"]["ArgItems"];
            maxItems?: number;
            maxLength?: number;
            maximum?: number;
            minItems?: number;
            minLength?: number;
            minimum?: number;
            pattern?: string;
            title?: string;
            /** @enum {string} */
            type: "string" | "integer" | "number" | "boolean" | "array";
            "x-flag"?: string;
        };
        ArgsSchema: {
            additionalProperties?: boolean;
            properties?: {
                [key: string]: components["schemas"]["ArgProperty"];
            };
            required?: string[];
            /** @enum {string} */
            type?: "object";
            "x-elastic"?: {
                max: number;
                min: number;
            };
            "x-grace-period"?: number;
            "x-outputs"?: {
                [key: string]: {
                    description: string;
                    path: string;
                    type: string;
                };
            };
        };
        AttemptSummary: {
            attempt: number;
            backend: string | null;
            cause: string | null;
            /** Format: date-time */
            created_at: string;
            exit_code: number | null;
            /** Format: date-time */
            finished_at: string | null;
            id: number;
            preemptions: number;
            queue_position: number | null;
            reason: string | null;
            /** Format: date-time */
            started_at: string | null;
            /** @enum {string} */
            state: "queued" | "pending" | "waiting" | "running" | "succeeded" | "failed" | "cancelled" | "skipped" | "upstream_failed";
            /** Format: date-time */
            submitted_at: string | null;
            task_id: number;
        };
        Backfill: {
            /** Format: date */
            end: string;
            /** Format: date */
            start: string;
        };
        BuildLog: {
            items: components["schemas"]["BuildLogLine"][];
            reason: string | null;
            /** @enum {string} */
            state: "pending" | "running" | "stopped" | "succeeded" | "failed";
        };
        BuildLogLine: {
            line: string;
            seq: number;
        };
        Canary: {
            version_id: number;
            weight: number;
        };
        Clone: {
            name: string;
            /** @default true */
            paused?: boolean;
        };
        Cluster: {
            enabled?: boolean;
            in_cluster?: boolean;
            /** @enum {string} */
            kind: "kubernetes" | "local";
            kube_context?: string | null;
            name: string;
            /** Format: url */
            prometheus_url?: string | null;
            /** @enum {string} */
            serving_engine?: "deployments" | "kserve";
        };
        ClusterOut: {
            /** Format: date-time */
            created_at: string;
            enabled: boolean;
            id: number;
            in_cluster: boolean;
            /** @enum {string} */
            kind: "kubernetes" | "local";
            kube_context: string | null;
            name: string;
            prometheus_url: string | null;
            /** @enum {string} */
            serving_engine: "deployments" | "kserve";
            /** Format: date-time */
            updated_at: string;
        };
        DiscoveredNode: {
            cpu_millicores: number;
            gpus: number;
            memory_bytes: number;
            name: string;
            schedulable: boolean;
            /** @description null: schedulable; else cordoned, not ready or tainted ... */
            why: string | null;
        };
        EarlyStopping: {
            /** @enum {string} */
            kind: "median" | "successive_halving" | "hyperband";
            max_resource?: number;
            /** @default 1 */
            min_resource?: number;
            /** @default 3 */
            reduction_factor?: number;
            /** @default 3 */
            startup_trials?: number;
            /** @default 0 */
            warmup_steps?: number;
        };
        Edge: {
            downstream_task_id: number;
            pipeline_id: number;
            upstream_task_id: number;
        };
        EdgeOut: {
            downstream_task_id: number;
            id: number;
            pipeline_id: number;
            project_id: number;
            upstream_task_id: number;
        };
        Empty: Record<string, never>;
        Error: {
            errors?: components["schemas"]["FieldReason"][];
            message: string;
        };
        Experiment: {
            /**
             * @default tpe
             * @enum {string}
             */
            algorithm?: "tpe" | "random" | "cmaes" | "grid" | "qmc" | "nsga2";
            description?: string;
            early_stopping?: (Record<string, never> | null) | components["schemas"]["EarlyStopping"];
            /** @default 3 */
            max_failed_trials?: number;
            /** @default 10 */
            max_trials?: number;
            name: string;
            objectives: components["schemas"]["Objective"][];
            /** @default 1 */
            parallel_trials?: number;
            pipeline_id: number;
            search_space: components["schemas"]["Parameter"][];
            seed?: number | null;
            /**
             * @description start it at once (else: state created)
             * @default true
             */
            start?: boolean;
            time_limit_seconds?: number | null;
        };
        ExperimentOut: {
            algorithm: string;
            /** Format: date-time */
            created_at: string;
            created_by_id: number | null;
            description: string;
            early_stopping: ((Record<string, never> | null) | components["schemas"]["EarlyStopping"]) | null;
            /** Format: date-time */
            finished_at: string | null;
            id: number;
            max_failed_trials: number;
            max_trials: number;
            name: string;
            objectives: components["schemas"]["Objective"][];
            parallel_trials: number;
            pipeline_id: number;
            project_id: number;
            reason: string | null;
            search_space: components["schemas"]["Parameter"][];
            seed: number | null;
            /** Format: date-time */
            started_at: string | null;
            /** @enum {string} */
            state: "created" | "running" | "succeeded" | "failed" | "cancelled";
            time_limit_seconds: number | null;
        };
        ExperimentYaml: {
            yaml: string;
        };
        FieldReason: {
            field: string;
            reason: string;
        };
        Graph: {
            edges?: components["schemas"]["GraphEdge"][];
            tasks: components["schemas"]["GraphTask"][];
        };
        GraphEdge: {
            downstream: string;
            upstream: string;
        };
        GraphTask: {
            args?: {
                [key: string]: unknown;
            };
            id?: number;
            image?: string | null;
            key: string;
            name: string;
            position?: {
                [key: string]: number;
            };
            resource_group_id?: number | null;
            resources?: components["schemas"]["Resources"];
            retries?: number;
            retry_delay?: number;
            template_id: number;
            timeout?: number | null;
            /** @enum {unknown} */
            trigger_rule?: "all_success" | "all_done" | "one_failed";
        };
        GroupNode: {
            cpu_millicores?: number;
            gpus?: number;
            memory_bytes?: number;
            name: string;
        };
        GroupProjectStatus: {
            borrowed: {
                cpu_millicores: number;
                gpus: number;
                memory_bytes: number;
            };
            project: string;
            project_id: number;
            /** @description null: none */
            quota: {
                cpu_millicores: number;
                gpus: number;
                memory_bytes: number;
            } | null;
            used: {
                cpu_millicores: number;
                gpus: number;
                memory_bytes: number;
            };
            waiting: number;
        };
        GroupRunningAttempt: {
            borrowing: boolean;
            cpu_millicores: number;
            gpus: number;
            memory_bytes: number;
            nodes: {
                [key: string]: number;
            };
            pipeline: string;
            preemptions: number;
            project: string;
            run_id: number;
            /** Format: date-time */
            started_at: string;
            task: string;
            task_run_id: number;
        };
        GroupUsage: {
            capacity: components["schemas"]["Amount"] | null;
            cluster_id: number | null;
            gpu_type: string | null;
            name: string;
            projects: components["schemas"]["ProjectUsage"][];
            resource_group_id: number | null;
            used: components["schemas"]["Amount"];
        };
        GroupWaitingAttempt: {
            cpu_millicores: number;
            gpus: number;
            memory_bytes: number;
            pipeline: string;
            position: number;
            project: string;
            reason: string;
            run_id: number;
            task: string;
            task_run_id: number;
            /** Format: date-time */
            waiting_since: string;
        };
        Image: {
            description?: string;
            pull_secret?: string | null;
            repository: string;
            tag: string;
        };
        ImageBuild: {
            apt_packages?: string[];
            base_image?: string | null;
            dockerfile?: string | null;
            notebook_id?: number | null;
            packages?: string[];
            project_id: number;
            repository: string;
            requirements?: string;
            resource_group_id?: number | null;
            /** @enum {string} */
            source?: "packages" | "dockerfile" | "notebook";
            tag: string;
        };
        ImageBuildOut: {
            apt_packages: string[];
            backend_ref: {
                [key: string]: unknown;
            } | null;
            base_image: string | null;
            cached: boolean;
            /** Format: date-time */
            created_at: string;
            created_by_id: number | null;
            dockerfile: string | null;
            environment: string | null;
            /** Format: date-time */
            finished_at: string | null;
            id: number;
            image_id: number | null;
            notebook_id: number | null;
            packages: string[];
            project_id: number;
            reason: string | null;
            repository: string;
            resource_group_id: number | null;
            /** @enum {string} */
            source: "packages" | "dockerfile" | "notebook";
            /** Format: date-time */
            started_at: string | null;
            /** @enum {string} */
            state: "pending" | "running" | "stopped" | "succeeded" | "failed";
            tag: string;
            /** Format: date-time */
            updated_at: string;
        };
        ImageOut: {
            /** Format: date-time */
            created_at: string;
            description: string;
            environment: string | null;
            id: number;
            project_id: number | null;
            pull_secret: string | null;
            repository: string;
            tag: string;
            /** Format: date-time */
            updated_at: string;
        };
        ImageUsage: {
            image: string;
            notebooks: {
                id: number;
                name: string;
                project_id: number;
            }[];
            tasks: {
                id: number;
                name: string;
                pipeline_id: number;
            }[];
            templates: {
                id: number;
                name: string;
                version: string;
            }[];
        };
        InferenceService: {
            /** @enum {string} */
            autoscale_metric?: "cpu" | "gpu" | "rps";
            autoscale_target?: number;
            max_replicas?: number;
            min_replicas?: number;
            mirror_percent?: number;
            model_version_id: number;
            name: string;
            project_id: number;
            resource_group_id?: number | null;
            resources?: components["schemas"]["Resources"];
            shadow_version_id?: number | null;
            traffic?: {
                [key: string]: unknown;
            };
        };
        InferenceServiceOut: {
            autoscale_metric: string;
            autoscale_target: number;
            /** Format: date-time */
            claimed_until: string | null;
            /** Format: date-time */
            created_at: string;
            deleting: boolean;
            endpoint: string;
            generation: number;
            id: number;
            jobs: {
                [key: string]: unknown;
            };
            max_replicas: number;
            min_replicas: number;
            mirror_percent: number;
            model_name: string | null;
            model_version_id: number;
            name: string;
            /** Format: date-time */
            next_check_at: string | null;
            project_id: number;
            reason: string;
            resource_group_id: number | null;
            resources: components["schemas"]["Resources"];
            shadow_version_id: number | null;
            /** @enum {string} */
            state: "pending" | "running" | "stopped" | "succeeded" | "failed";
            traffic: {
                [key: string]: unknown;
            };
            /** Format: date-time */
            updated_at: string;
            url: string | null;
            versions_status: {
                [key: string]: unknown;
            };
        };
        JobTemplate: {
            args_schema?: {
                [key: string]: unknown;
            };
            category?: string;
            command?: string[];
            default_resources?: components["schemas"]["Resources"];
            description?: string;
            env?: {
                [key: string]: string;
            };
            image: string;
            /** @enum {string} */
            kind: "imagebuild" | "job" | "kserve-predictor" | "model-server" | "mpijob" | "notebook" | "pytorchjob" | "service" | "serving-router" | "serving-traffic" | "tfjob" | "volcanojob" | "xgboostjob";
            max_resources?: components["schemas"]["Resources"];
            name: string;
            version: string;
        };
        JobTemplateOut: {
            args_schema: components["schemas"]["ArgsSchema"];
            builtin: boolean;
            category: string;
            checkpoints: boolean;
            command: string[];
            /** Format: date-time */
            created_at: string;
            default_resources: components["schemas"]["Resources"];
            description: string;
            env: {
                [key: string]: string;
            };
            id: number;
            image: string;
            kind: string;
            max_resources: components["schemas"]["Resources"];
            name: string;
            pipeline_step: boolean;
            /** Format: date-time */
            updated_at: string;
            version: string;
        };
        LimitsOut: {
            platform: {
                max_backfill_days: components["schemas"]["PlatformLimitOut"];
                min_schedule_interval: components["schemas"]["PlatformLimitOut"];
            };
            projects: components["schemas"]["ProjectLimitOut"][];
        };
        LogBatch: {
            items: components["schemas"]["LogLine"][];
            /** @enum {string} */
            state: "queued" | "pending" | "waiting" | "running" | "succeeded" | "failed" | "cancelled" | "skipped" | "upstream_failed";
        };
        LogLine: {
            line: string;
            replica: string;
            seq: number;
            timestamp: number;
        };
        LoginLimits: {
            addresses: {
                address: string;
                /** @description in the current streak */
                failures: number;
                /** @description seconds until the next attempt is let through (0: now) */
                retry_after: number;
            }[];
            known_addresses: {
                address: string;
                /** Format: date-time */
                expires_at: string;
                /** Format: date-time */
                last_login_at: string;
            }[];
            new_addresses: {
                attempts_left: number;
                /** @description seconds until the next attempt is let through (0: now) */
                retry_after: number;
            };
        };
        Me: {
            csrf_token: string;
            first_name: string;
            id: number;
            is_admin: boolean;
            last_name: string;
            projects: components["schemas"]["MyProject"][];
            username: string;
        };
        Member: {
            /** @enum {string} */
            role: "viewer" | "developer" | "owner";
            username: string;
        };
        MemberList: {
            items: components["schemas"]["MemberOut"][];
        };
        MemberOut: {
            id: number;
            /** @enum {string} */
            role: "viewer" | "developer" | "owner";
            user_id: number;
            username: string;
        };
        MemberRole: {
            /** @enum {string} */
            role: "viewer" | "developer" | "owner";
        };
        Message: {
            message: string;
        };
        MetricHistory: {
            metrics: {
                [key: string]: {
                    step: number;
                    value: number;
                }[];
            };
        };
        MetricSample: {
            cpu_cores: number | null;
            gpu_memory_bytes: number | null;
            gpu_utilization: number | null;
            memory_bytes: number | null;
            replica: string;
            timestamp: number;
        };
        ModelFile: {
            path: string;
            size?: number;
        };
        ModelUpload: {
            description?: string;
            /** Format: binary */
            file: string;
            /** @enum {string} */
            framework?: "sklearn" | "pytorch" | "torchscript" | "onnx" | "tensorflow" | "xgboost" | "custom";
            metrics?: string;
            name: string;
            project_id: number;
            signature?: string;
        };
        ModelVersion: {
            description?: string;
            files?: components["schemas"]["ModelFile"][];
            /** @enum {string} */
            framework?: "sklearn" | "pytorch" | "torchscript" | "onnx" | "tensorflow" | "xgboost" | "custom";
            image?: string | null;
            metrics?: {
                [key: string]: number;
            };
            name: string;
            params?: {
                [key: string]: unknown;
            };
            project_id: number;
            signature?: components["schemas"]["Signature"];
            /** @enum {string} */
            stage?: "none" | "staging" | "production" | "archived";
            task_run_id?: number | null;
            uri: string;
            version?: number;
        };
        ModelVersionOut: {
            /** Format: date-time */
            created_at: string;
            description: string;
            files: components["schemas"]["ModelFile"][];
            framework: string;
            id: number;
            image: string | null;
            metrics: {
                [key: string]: number;
            };
            name: string;
            params: {
                [key: string]: unknown;
            };
            pipeline_id: number | null;
            project_id: number;
            run_id: number | null;
            signature: components["schemas"]["Signature"];
            /** @enum {string} */
            stage: "none" | "staging" | "production" | "archived";
            task_run_id: number | null;
            /** Format: date-time */
            updated_at: string;
            uri: string;
            version: number;
        };
        MyProject: {
            id: number;
            name: string;
            /** @enum {string} */
            role: "viewer" | "developer" | "owner";
        };
        NewUser: components["schemas"]["UserOut"] & {
            /** @description only when the server generated it; shown once */
            generated_password?: string;
        };
        Notebook: {
            image: string;
            name: string;
            project_id: number;
            resource_group_id?: number | null;
            resources?: components["schemas"]["Resources"];
            volume?: string | null;
        };
        NotebookImageChoices: {
            items: {
                description: string;
                environment: boolean;
                /** @enum {string} */
                group: "default" | "project" | "catalog";
                image: string;
            }[];
            only_defaults: boolean;
        };
        NotebookOut: {
            /** Format: date-time */
            created_at: string;
            created_by_id: number | null;
            /** @enum {string} */
            desired: "running" | "stopped" | "deleted";
            id: number;
            image: string;
            /** Format: date-time */
            last_activity_at: string | null;
            name: string;
            project_id: number;
            reason: string | null;
            resource_group_id: number | null;
            resources: components["schemas"]["Resources"];
            /** Format: date-time */
            started_at: string | null;
            /** @enum {string} */
            state: "pending" | "pulling" | "waiting" | "running" | "idle" | "stopping" | "stopped" | "failed";
            /** Format: date-time */
            updated_at: string;
            url: string | null;
            volume: string | null;
        };
        Objective: {
            /**
             * @default minimize
             * @enum {string}
             */
            direction?: "minimize" | "maximize";
            metric: string;
        };
        OutputFile: {
            /** @description true: left on the Kubernetes outputs claim beyond the platform's copy; its download and preview answer 202 while the worker fetches it */
            on_claim?: boolean;
            path: string;
            /** @enum {string} */
            preview: "metrics" | "csv" | "text" | "image" | "none";
            size: number;
        };
        PageMeta: {
            /** @description rows matching the filters, on every page */
            count: number;
            /** @description 0-based */
            page: number;
            page_size: number;
        };
        ParamImportances: {
            complete: number;
            importances: {
                importance: number;
                name: string;
            }[];
            reason: string | null;
        };
        Parameter: {
            choices?: unknown[];
            high?: number;
            /** @default false */
            log?: boolean;
            low?: number;
            name: string;
            step?: number;
            /** @enum {string} */
            type: "float" | "int" | "categorical";
        };
        PasswordChanged: {
            /** @description only when the server generated it; shown once */
            generated_password?: string;
            message: string;
        };
        PasswordReset: {
            generate_password?: boolean;
            password?: string;
        };
        Pipeline: {
            /** @enum {unknown} */
            concurrency_policy?: "wait" | "skip" | "cancel";
            depends_on_past?: boolean;
            description?: string;
            max_active_runs?: number;
            name: string;
            parameters?: {
                [key: string]: unknown;
            };
            paused?: boolean;
            project_id: number;
            schedule?: string | null;
            webhook_events?: ("run.failed" | "run.succeeded" | "run.cancelled" | "task.failed")[];
            /** Format: url */
            webhook_url?: string | null;
        };
        PipelineExport: {
            yaml: string;
        };
        PipelineGraph: {
            edges: components["schemas"]["EdgeOut"][];
            pipeline: components["schemas"]["PipelineOut"];
            tasks: (components["schemas"]["TaskOut"] & {
                key?: string;
            })[];
        };
        PipelineOut: {
            /** @enum {string} */
            concurrency_policy: "wait" | "skip" | "cancel";
            /** Format: date-time */
            created_at: string;
            created_by_id: number | null;
            depends_on_past: boolean;
            description: string;
            id: number;
            max_active_runs: number;
            name: string;
            parameters: {
                [key: string]: unknown;
            };
            paused: boolean;
            project_id: number;
            schedule: string | null;
            /** Format: date-time */
            updated_at: string;
            webhook_events: ("run.failed" | "run.succeeded" | "run.cancelled" | "task.failed")[];
            webhook_url: string | null;
        };
        PipelineRun: {
            /** @description values of the pipeline's parameters for this run ({{ params.<name> }}); the pipeline's `parameters` give the rest */
            parameters?: {
                [key: string]: unknown;
            };
            pipeline_id: number;
            run_key?: string;
        };
        PipelineRunOut: {
            /** Format: date-time */
            created_at: string;
            created_by_id: number | null;
            experiment_id: number | null;
            /** Format: date-time */
            finished_at: string | null;
            id: number;
            /** Format: date */
            logical_date: string | null;
            /** Format: date-time */
            next_reconcile_at: string | null;
            only_task_id: number | null;
            /** @description values of the pipeline's parameters for this run ({{ params.<name> }}); the pipeline's `parameters` give the rest */
            parameters: {
                [key: string]: unknown;
            };
            pipeline_id: number;
            project_id: number;
            reason: string | null;
            /** Format: date-time */
            reconcile_requested_at: string | null;
            /** Format: date-time */
            reconciled_at: string | null;
            rerun_of_id: number | null;
            run_key: string;
            /** Format: date-time */
            started_at: string | null;
            /** @enum {string} */
            state: "queued" | "running" | "succeeded" | "failed" | "cancelled";
            trial_number: number | null;
            /** @enum {string} */
            trigger: "manual" | "schedule" | "backfill" | "debug";
        };
        PipelineYaml: {
            yaml: string;
        };
        PlatformLimitOut: {
            /** @description the config's (MYAPP_*), used when not set */
            default: number;
            help: string;
            maximum: number;
            minimum: number;
            set: boolean;
            value: number;
        };
        PlatformLimits: {
            max_backfill_days?: number | null;
            min_schedule_interval?: number | null;
        };
        Project: {
            description?: string;
            name: string;
            namespace?: string;
            notebook_idle_timeout?: number | null;
        };
        ProjectLimit: {
            max_running_runs: number | null;
        };
        ProjectLimitOut: {
            id: number;
            /** @description null: no limit */
            max_running_runs: number | null;
            name: string;
            queued: number;
            running: number;
        };
        ProjectOut: {
            /** Format: date-time */
            created_at: string;
            description: string;
            id: number;
            max_running_runs: number | null;
            name: string;
            namespace: string;
            notebook_idle_timeout: number | null;
            service_account: string;
            /** Format: date-time */
            updated_at: string;
        };
        ProjectUsage: {
            project: string;
            project_id: number;
            quota: components["schemas"]["Amount"] | null;
            running: components["schemas"]["RunningCounts"];
            used: components["schemas"]["Amount"];
        };
        Promote: {
            version_id?: number | null;
        };
        Quota: {
            can_borrow?: boolean;
            can_lend?: boolean;
            cpu?: string;
            gpus?: number;
            memory?: string;
            project_id: number;
            resource_group_id: number;
        };
        QuotaOut: {
            can_borrow: boolean;
            can_lend: boolean;
            /** @description cpu_millicores as a Kubernetes quantity, e.g. 500m or 4 */
            cpu: string;
            cpu_millicores: number;
            /** Format: date-time */
            created_at: string;
            gpus: number;
            id: number;
            /** @description memory_bytes as a Kubernetes quantity, e.g. 512Mi or 8Gi */
            memory: string;
            memory_bytes: number;
            project_id: number;
            resource_group_id: number;
            /** Format: date-time */
            updated_at: string;
        };
        RegistryCredentials: {
            password: string;
            registry: string;
            username: string;
        };
        RegistryCredentialsState: {
            registry: string | null;
            set: boolean;
            updated_at: string | null;
        };
        ReportMetrics: {
            step: number;
            /** @description metric name -> finite number, 1 to 100 of them */
            values: {
                [key: string]: number;
            };
        };
        ReportedMetric: {
            name: string;
            step: number;
            value: number;
        };
        ResourceGroup: {
            cluster_id: number;
            cpu?: string;
            discover_nodes?: boolean;
            gang_scheduling?: boolean;
            gpu_type?: string | null;
            gpus?: number;
            max_preemptions?: number;
            memory?: string;
            name: string;
            node_selector?: {
                [key: string]: string;
            };
            nodes?: components["schemas"]["GroupNode"][];
            /** @enum {string} */
            policy?: "gang-fifo" | "easy-backfill" | "tiresias" | "tiresias-las" | "sieve";
            queue?: string | null;
            tolerations?: components["schemas"]["Toleration"][];
        };
        ResourceGroupOut: {
            cluster_id: number;
            /** @description cpu_millicores as a Kubernetes quantity, e.g. 500m or 4 */
            cpu: string;
            cpu_millicores: number;
            /** Format: date-time */
            created_at: string;
            discover_nodes: boolean;
            /** Format: date-time */
            discovered_at: string | null;
            discovered_nodes: {
                [key: string]: unknown;
            }[];
            discovery_error: string | null;
            gang_scheduling: boolean;
            gpu_type: string | null;
            gpus: number;
            id: number;
            max_preemptions: number;
            /** @description memory_bytes as a Kubernetes quantity, e.g. 512Mi or 8Gi */
            memory: string;
            memory_bytes: number;
            name: string;
            node_selector: {
                [key: string]: string;
            };
            nodes: components["schemas"]["GroupNode"][];
            policy: string;
            queue: string | null;
            tolerations: components["schemas"]["Toleration"][];
            /** Format: date-time */
            updated_at: string;
        };
        ResourceGroupStatus: {
            capacity: {
                cpu_millicores: number;
                gpus: number;
                memory_bytes: number;
                nodes: {
                    cpu_millicores: number;
                    gpus: number;
                    memory_bytes: number;
                    name: string;
                }[];
            };
            discovery: {
                /** Format: date-time */
                at: string | null;
                enabled: boolean;
                error: string | null;
                nodes: components["schemas"]["DiscoveredNode"][];
            };
            projects: components["schemas"]["GroupProjectStatus"][];
            queue: components["schemas"]["GroupWaitingAttempt"][];
            resource_group: {
                cluster: string;
                id: number;
                name: string;
                policy: string;
            };
            running: components["schemas"]["GroupRunningAttempt"][];
            used: {
                cpu_millicores: number;
                gpus: number;
                memory_bytes: number;
            };
        };
        Resources: {
            cpu?: string;
            gpu?: number;
            memory?: string;
        };
        RunId: {
            run_id: number;
        };
        RunIds: {
            run_ids: number[];
        };
        RunSnapshot: {
            run: {
                /** Format: date-time */
                created_at: string;
                created_by_id: number | null;
                experiment_id: number | null;
                /** Format: date-time */
                finished_at: string | null;
                id: number;
                /** Format: date */
                logical_date: string | null;
                /** Format: date-time */
                next_reconcile_at: string | null;
                only_task_id: number | null;
                parameters: {
                    [key: string]: unknown;
                };
                pipeline_id: number;
                project_id: number;
                reason: string | null;
                /** Format: date-time */
                reconcile_requested_at: string | null;
                rerun_of_id: number | null;
                run_key: string;
                /** Format: date-time */
                started_at: string | null;
                /** @enum {string} */
                state: "queued" | "running" | "succeeded" | "failed" | "cancelled";
                trial_number: number | null;
                /** @enum {string} */
                trigger: "manual" | "schedule" | "backfill" | "debug";
            };
            task_runs: components["schemas"]["AttemptSummary"][];
        };
        RunningCounts: {
            /** @description notebooks started */
            notebooks: number;
            /** @description inference services holding model servers */
            services: number;
            /** @description attempts running (or pending on their backend) */
            tasks: number;
        };
        RunningWork: {
            builds: components["schemas"]["WorkItem"][];
            notebooks: components["schemas"]["WorkItem"][];
            runs: components["schemas"]["WorkItem"][];
            services: components["schemas"]["WorkItem"][];
        };
        ServiceLogs: {
            items: {
                ms: number;
                request: string;
                response: string;
                status: number;
                time: number;
                version: string;
            }[];
        };
        ServiceMetrics: {
            series: {
                [key: string]: {
                    errors: number;
                    n: number;
                    p50: number | null;
                    p95: number | null;
                    p99: number | null;
                    t: number;
                }[];
            };
            versions: {
                [key: string]: {
                    errors: number;
                    p50: number | null;
                    p95: number | null;
                    p99: number | null;
                    requests: number;
                    rps: number;
                };
            };
            window: number;
        };
        Session: {
            authenticated: boolean;
            csrf_token: string;
        };
        Signature: {
            /** @enum {string} */
            dtype?: "float32" | "float64" | "int32" | "int64" | "string";
            shape?: (number | null)[];
        };
        Simulate: {
            gpus: number;
            jobs?: number;
            max_preemptions?: number;
            points?: number;
            policies: ("gang-fifo" | "easy-backfill" | "tiresias" | "tiresias-las" | "sieve")[];
            trace: string;
        };
        Simulation: {
            gpus: number;
            jobs: number;
            results: components["schemas"]["SimulationResult"][];
            trace: string;
        };
        SimulationResult: {
            avg_jct_s: number;
            gpus: number;
            jobs: number;
            lost_gpu_seconds: number;
            makespan_s: number;
            max_preemptions_of_a_job: number;
            offered_load: number;
            p50_jct_s: number;
            p95_jct_s: number;
            p99_jct_s: number;
            partial_gang_seconds: number;
            policy: string;
            preemptions_per_job: number;
            series: components["schemas"]["SimulationSeries"];
            sim_seconds: number;
            utilization: number;
        };
        SimulationSeries: {
            jct_by_submission: {
                avg_jct_s: (number | null)[];
                jobs: number[];
                t: number[];
            };
            over_time: {
                t: number[];
                utilization: number[];
                waiting: number[];
            };
        };
        SimulatorTraces: {
            default_policy: string;
            max_gpus: number;
            max_jobs: number;
            node_gpus: number;
            policies: string[];
            traces: {
                default_gpus: number;
                description: string;
                name: string;
            }[];
        };
        StreamEnd: {
            /** @enum {string} */
            reason?: "finished" | "deleted";
            /** @enum {string} */
            state?: "queued" | "pending" | "waiting" | "running" | "succeeded" | "failed" | "cancelled" | "skipped" | "upstream_failed";
        };
        StreamProblem: {
            message: string;
            /** @enum {string} */
            state: "queued" | "pending" | "waiting" | "running" | "succeeded" | "failed" | "cancelled" | "skipped" | "upstream_failed";
        };
        Task: {
            args?: {
                [key: string]: unknown;
            };
            image?: string | null;
            name: string;
            pipeline_id: number;
            position?: {
                [key: string]: number;
            };
            resource_group_id?: number | null;
            resources?: components["schemas"]["Resources"];
            retries?: number;
            retry_delay?: number;
            template_id: number;
            timeout?: number | null;
            /** @enum {unknown} */
            trigger_rule?: "all_success" | "all_done" | "one_failed";
        };
        TaskLogs: {
            items: components["schemas"]["LogLine"][];
            replicas: string[];
        };
        TaskManifests: {
            items: {
                [key: string]: unknown;
            }[];
        };
        TaskMetrics: {
            items: components["schemas"]["MetricSample"][];
        };
        TaskOut: {
            args: {
                [key: string]: unknown;
            };
            /** Format: date-time */
            created_at: string;
            id: number;
            image: string | null;
            name: string;
            pipeline_id: number;
            position: {
                [key: string]: number;
            };
            project_id: number;
            resource_group_id: number | null;
            resources: components["schemas"]["Resources"];
            retries: number;
            retry_delay: number;
            template_id: number;
            timeout: number | null;
            /** @enum {string} */
            trigger_rule: "all_success" | "all_done" | "one_failed";
            /** Format: date-time */
            updated_at: string;
        };
        TaskOutputs: {
            files: components["schemas"]["OutputFile"][];
            metrics: components["schemas"]["ReportedMetric"][];
            output_dir: string | null;
        };
        TaskRunOut: {
            attempt: number;
            backend: string | null;
            backend_errors: number;
            backend_ref: {
                [key: string]: unknown;
            } | null;
            /** Format: date-time */
            backend_retry_at: string | null;
            cause: string | null;
            /** Format: date-time */
            cleanup_at: string | null;
            /** Format: date-time */
            created_at: string;
            exit_code: number | null;
            /** Format: date-time */
            finished_at: string | null;
            id: number;
            lost_nodes: string[] | null;
            manifests: {
                [key: string]: unknown;
            }[];
            metrics: components["schemas"]["MetricSample"][] | null;
            output_dir: string | null;
            outputs: components["schemas"]["OutputFile"][] | null;
            pipeline_run_id: number;
            placement: {
                [key: string]: number;
            } | null;
            /** Format: date-time */
            preempted_at: string | null;
            preemptions: number;
            project_id: number;
            queue_position: number | null;
            reason: string | null;
            reported_metrics: components["schemas"]["ReportedMetric"][] | null;
            requests: {
                [key: string]: number;
            } | null;
            /** Format: date-time */
            started_at: string | null;
            /** @enum {string} */
            state: "queued" | "pending" | "waiting" | "running" | "succeeded" | "failed" | "cancelled" | "skipped" | "upstream_failed";
            /** Format: date-time */
            submitted_at: string | null;
            task_id: number;
        };
        Toleration: {
            /** @enum {string} */
            effect?: "NoSchedule" | "PreferNoSchedule" | "NoExecute";
            key?: string;
            /** @enum {string} */
            operator?: "Exists" | "Equal";
            tolerationSeconds?: number;
            value?: string;
        };
        TrialOut: {
            /** Format: date-time */
            created_at: string;
            experiment_id: number;
            /** Format: date-time */
            finished_at: string | null;
            id: number;
            intermediate: number[][];
            number: number;
            parameters: {
                [key: string]: unknown;
            };
            pipeline_run_id: number | null;
            project_id: number;
            pruned_step: number | null;
            reason: string | null;
            /** @enum {string} */
            state: "running" | "complete" | "pruned" | "failed" | "cancelled";
            values: number[] | null;
        };
        UsageReport: {
            items: components["schemas"]["GroupUsage"][];
        };
        UserCreate: {
            /** Format: email */
            email: string;
            first_name: string;
            generate_password?: boolean;
            is_admin?: boolean;
            last_name?: string;
            password?: string;
            username: string;
        };
        UserOut: {
            active: boolean;
            /** Format: date-time */
            created_on: string | null;
            email: string;
            first_name: string;
            id: number;
            is_admin: boolean;
            /** Format: date-time */
            last_login: string | null;
            last_name: string;
            login_count: number | null;
            /** @description refused a sign-in somewhere right now: an address backing off, or no attempt left from new addresses */
            sign_in_limited: boolean;
            username: string;
        };
        UserUpdate: {
            active?: boolean;
            /** Format: email */
            email?: string;
            first_name?: string;
            is_admin?: boolean;
            last_name?: string;
        };
        WebhookSecret: {
            /** @description HMAC-SHA256 key of X-Myapp-Signature; null until the pipeline has a webhook */
            secret: string | null;
        };
        WorkItem: {
            id: number;
            name: string;
            state: string;
        };
    };
    responses: {
        /** @description Bad request */
        400: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": {
                    message: string | {
                        [key: string]: string[];
                    };
                };
            };
        };
        /** @description Unauthorized */
        401: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": {
                    message?: string;
                };
            };
        };
        /** @description Forbidden */
        403: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": {
                    message?: string;
                };
            };
        };
        /** @description Not found */
        404: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": {
                    message?: string;
                };
            };
        };
        /** @description Could not process entity */
        422: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": {
                    message?: string;
                };
            };
        };
        /** @description Fatal error */
        500: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": {
                    message?: string;
                };
            };
        };
        /** @description The database is busy with other writes (SQLite): try again after Retry-After */
        Busy: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Conflicts with stored data (errors name the field when one is to blame) */
        Conflict: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Invalid input: {message, errors: [{field, reason}]} */
        InvalidInput: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Role does not allow this */
        NotAllowed: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Not authenticated */
        NotAuthenticated: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Not found, or not in your projects */
        NotFoundHere: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description The body is over MYAPP_MAX_BODY_BYTES */
        TooLarge: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
        /** @description Too many open streams (Retry-After): myapp/api/streams.py */
        TooManyStreams: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error"];
            };
        };
    };
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export type operations = Record<string, never>;

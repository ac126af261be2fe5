export declare const SHIPPED_ENTRIES: {
  readonly signon: string;
  readonly completion: string;
  readonly editorial: string;
  readonly "signon-cli": string;
  readonly "completion-cli": string;
};
export declare const SHIPPED_NODE_OPTIONS: readonly string[];
export declare const BUILT_PACKAGES: readonly string[];

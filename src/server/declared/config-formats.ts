/** The formats a declarative config file may be written in (a module of its own: the CLI's help names them). */
export const configFormats = ["yaml", "toml", "json"] as const;
export type ConfigFormat = (typeof configFormats)[number];

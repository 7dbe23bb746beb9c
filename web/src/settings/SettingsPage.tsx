import type { Me } from "../me.ts"
import { Link } from "../router.tsx"
import type { Loaded } from "../useLoad.ts"
import { ApiKeysSettings } from "./ApiKeysSettings.tsx"
import { MembersSettings } from "./MembersSettings.tsx"
import { ModelsSettings } from "./ModelsSettings.tsx"
import { RecordingsSettings } from "./RecordingsSettings.tsx"
import { TelephonySettings } from "./TelephonySettings.tsx"

const pages = [
  { path: "models", label: "Models" },
  { path: "telephony", label: "Telephony" },
  { path: "recordings", label: "Recordings" },
  { path: "api-keys", label: "API keys" },
  { path: "members", label: "Members" }
] as const

type SettingsPath = typeof pages[number]["path"]

const SettingsContent = ({ path, me }: { readonly path: SettingsPath; readonly me: Me }) => {
  switch (path) {
    case "models":
      return <ModelsSettings me={me} />
    case "telephony":
      return <TelephonySettings me={me} />
    case "recordings":
      return <RecordingsSettings />
    case "api-keys":
      return <ApiKeysSettings me={me} />
    case "members":
      return <MembersSettings me={me} />
  }
}

/** The organization's settings: one page per area, the caller's role deciding what they may change. */
const SettingsPage = ({ pathname, me }: { readonly pathname: string; readonly me: Loaded<Me> }) => {
  const asked = pathname.replace(/^\/settings\/?/, "").replace(/\/$/, "") || "models"
  const page = pages.find((candidate) => candidate.path === asked)
  return (
    <div className="settings">
      <nav aria-label="Settings" className="settings-nav">
        <h1>Settings</h1>
        <ul>
          {pages.map((candidate) => (
            <li key={candidate.path}>
              <Link
                href={`/settings/${candidate.path}`}
                aria-current={candidate.path === page?.path ? "page" : undefined}
              >
                {candidate.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <div className="settings-body">
        {!page && <p className="problem" role="alert">There is no settings page “{asked}”. Pick one from the list.</p>}
        {page && me.state === "loading" && <p role="status">Loading…</p>}
        {page && me.state === "failed" && <p className="problem" role="alert">{me.message}</p>}
        {page && me.state === "ready" && <SettingsContent path={page.path} me={me.value} />}
      </div>
    </div>
  )
}

export default SettingsPage

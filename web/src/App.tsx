import { lazy, Suspense, useSyncExternalStore } from "react"
import { prefetchAgent } from "./agentPrefetch.ts"
import { api } from "./api/client.ts"
import { CampaignPage } from "./campaigns/CampaignPage.tsx"
import { CampaignsPage } from "./campaigns/CampaignsPage.tsx"
import { NewCampaignPage } from "./campaigns/NewCampaignPage.tsx"
import { type Me, useMe } from "./me.ts"
import { AgentsPage } from "./pages/AgentsPage.tsx"
import { NewAgentPage } from "./pages/NewAgentPage.tsx"
import { NotFoundPage } from "./pages/NotFoundPage.tsx"
import { RunPage } from "./pages/RunPage.tsx"
import { RunsPage } from "./pages/RunsPage.tsx"
import { SignInPage } from "./pages/SignInPage.tsx"
import { UsagePage } from "./pages/UsagePage.tsx"
import { Link, match, useLocation } from "./router.tsx"
import { session } from "./session.ts"
import type { Loaded } from "./useLoad.ts"

/** The graph editor (and React Flow with it) loads only when an agent is opened. */
const loadEditor = () => import("./editor/EditorPage.tsx")
const EditorPage = lazy(loadEditor)
const SettingsPage = lazy(() => import("./settings/SettingsPage.tsx"))

const useSession = () => useSyncExternalStore(session.subscribe, session.current)

const sections = [
  { href: "/agents", label: "Agents" },
  { href: "/campaigns", label: "Campaigns" },
  { href: "/runs", label: "Conversations" },
  { href: "/usage", label: "Usage" },
  { href: "/settings", label: "Settings" }
]

const Page = ({ pathname, me }: { readonly pathname: string; readonly me: Loaded<Me> }) => {
  if (pathname === "/" || pathname === "/agents") return <AgentsPage onShown={loadEditor} />
  if (pathname === "/agents/new") return <NewAgentPage />
  const agent = match("/agents/:id", pathname)
  if (agent) {
    prefetchAgent(Number(agent.id))
    return <EditorPage key={agent.id} agentId={Number(agent.id)} />
  }
  if (pathname === "/campaigns") return <CampaignsPage />
  if (pathname === "/campaigns/new") return <NewCampaignPage />
  const campaign = match("/campaigns/:id", pathname)
  if (campaign) return <CampaignPage key={campaign.id} campaignId={Number(campaign.id)} />
  if (pathname === "/runs") return <RunsPage />
  const run = match("/runs/:id", pathname)
  if (run) return <RunPage key={run.id} runId={Number(run.id)} />
  if (pathname === "/usage") return <UsagePage />
  if (pathname === "/settings" || pathname.startsWith("/settings/")) return <SettingsPage pathname={pathname} me={me} />
  return <NotFoundPage />
}

const signOut = async () => {
  await api.POST("/api/v1/auth/logout").catch(() => undefined)
  session.end("signed-out")
}

export const App = () => {
  const signedIn = useSession()
  const { pathname } = useLocation()
  const me = useMe()
  if (!signedIn) return <SignInPage />
  const organization = me.state === "ready" ? me.value.organization_name : `#${signedIn.user.organization_id}`
  return (
    <div className="shell">
      <header className="topbar">
        <Link href="/agents" className="brand">talkgraph</Link>
        <nav aria-label="Sections">
          {sections.map((section) => (
            <Link
              key={section.href}
              href={section.href}
              aria-current={pathname.startsWith(section.href) || (pathname === "/" && section.href === "/agents")
                ? "page"
                : undefined}
            >
              {section.label}
            </Link>
          ))}
        </nav>
        <div className="account">
          <span className="organization">
            <span className="visually-hidden">Organization:</span> {organization}
          </span>
          <span>{signedIn.user.name || signedIn.user.email}</span>
          <button type="button" className="secondary" onClick={signOut}>Sign out</button>
        </div>
      </header>
      <main id="main">
        <Suspense fallback={<p role="status">Loading…</p>}>
          <Page pathname={pathname} me={me} />
        </Suspense>
      </main>
    </div>
  )
}

import { type AnchorHTMLAttributes, type MouseEvent, useSyncExternalStore } from "react"

const listeners = new Set<() => void>()

const subscribe = (listener: () => void) => {
  listeners.add(listener)
  window.addEventListener("popstate", listener)
  return () => {
    listeners.delete(listener)
    window.removeEventListener("popstate", listener)
  }
}

/** Client-side navigation: the server answers every console path with index.html. */
export const navigate = (to: string, options: { readonly replace?: boolean } = {}) => {
  if (options.replace) history.replaceState(null, "", to)
  else history.pushState(null, "", to)
  listeners.forEach((listener) => listener())
}

export const useLocation = () => {
  const href = useSyncExternalStore(subscribe, () => location.pathname + location.search)
  const url = new URL(href, location.origin)
  return { pathname: url.pathname, search: url.searchParams }
}

/** Matches `/agents/:id` style patterns; the parameters, or undefined. */
export const match = (pattern: string, pathname: string): Record<string, string> | undefined => {
  const want = pattern.split("/")
  const have = pathname.replace(/\/$/, "").split("/")
  if (want.length !== have.length) return undefined
  const params: Record<string, string> = {}
  for (const [index, part] of want.entries()) {
    const actual = have[index] ?? ""
    if (part.startsWith(":")) params[part.slice(1)] = decodeURIComponent(actual)
    else if (part !== actual) return undefined
  }
  return params
}

export const Link = ({ href, onClick, ...rest }: AnchorHTMLAttributes<HTMLAnchorElement> & { href: string }) => (
  <a
    href={href}
    onClick={(event: MouseEvent<HTMLAnchorElement>) => {
      onClick?.(event)
      if (event.defaultPrevented || event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return
      event.preventDefault()
      navigate(href)
    }}
    {...rest}
  />
)

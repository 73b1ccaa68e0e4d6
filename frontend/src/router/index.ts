import { createRouter, createWebHistory } from 'vue-router'

import ChatView from '@/views/ChatView.vue'

const router = createRouter({
  history: createWebHistory(import.meta.env.BASE_URL),
  routes: [
    { path: '/', redirect: { name: 'chat' } },
    { path: '/chat', name: 'chat', component: ChatView, meta: { title: 'Chat' } },
    {
      path: '/chat/:id(\\d+)',
      name: 'conversation',
      component: ChatView,
      meta: { title: 'Chat' },
    },
    {
      path: '/library',
      name: 'library',
      component: () => import('@/views/LibraryView.vue'),
      meta: { title: 'Library' },
    },
    {
      path: '/library/:id(\\d+)',
      name: 'document',
      component: () => import('@/views/DocumentView.vue'),
      meta: { title: 'Document' },
    },
    {
      path: '/library/:id(\\d+)/pages/:page(\\d+)',
      name: 'source',
      component: () => import('@/views/SourceView.vue'),
      meta: { title: 'Source' },
    },
    {
      path: '/notes',
      name: 'notes',
      component: () => import('@/views/NotesView.vue'),
      meta: { title: 'Notes' },
    },
    {
      path: '/upload',
      name: 'upload',
      component: () => import('@/views/UploadView.vue'),
      meta: { title: 'Upload' },
    },
    {
      path: '/perplexity',
      name: 'perplexity',
      component: () => import('@/views/PerplexityView.vue'),
      meta: { title: 'Perplexity' },
    },
    {
      path: '/settings',
      name: 'settings',
      component: () => import('@/views/SettingsView.vue'),
      meta: { title: 'Settings' },
    },
    {
      path: '/save',
      name: 'save',
      component: () => import('@/views/SaveView.vue'),
      meta: { title: 'Save a page' },
    },
    {
      path: '/:rest(.*)*',
      name: 'not-found',
      component: () => import('@/views/NotFoundView.vue'),
      meta: { title: 'Not found' },
    },
  ],
})

router.afterEach((to) => {
  document.title = to.meta.title ? `${to.meta.title as string} · Quire` : 'Quire'
})

export default router

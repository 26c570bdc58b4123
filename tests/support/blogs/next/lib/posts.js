import fs from 'fs';
import path from 'path';
import matter from 'gray-matter';

const postsDirectory = path.join(process.cwd(), 'posts');

export function getSortedPostsData() {
  const fileNames = fs.readdirSync(postsDirectory);
  return fileNames.map((fileName) => {
    const id = fileName.replace(/\.md$/, '');
    const matterResult = matter(fs.readFileSync(path.join(postsDirectory, fileName), 'utf8'));
    return { id, ...matterResult.data };
  });
}

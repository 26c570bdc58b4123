import { getAllPostIds, getPostData } from '../../lib/posts';

export default function Post({ postData }) {
  return <article dangerouslySetInnerHTML={{ __html: postData.contentHtml }} />;
}
